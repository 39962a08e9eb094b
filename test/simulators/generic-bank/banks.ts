// The institutions the test bank lists (CBN / NIBSS codes of real Nigerian banks), the two it opens
// virtual accounts at, NUBAN account numbers for those, and a stable made-up holder name for any
// other account number. Its own copy, so that the test bank stays a stranger to the gateway's code.

export interface Institution {
  code: string;
  name: string;
  slug: string;
}

export const INSTITUTIONS: readonly Institution[] = [
  { code: '044', name: 'Access Bank', slug: 'access-bank' },
  { code: '050', name: 'Ecobank Nigeria', slug: 'ecobank-nigeria' },
  { code: '070', name: 'Fidelity Bank', slug: 'fidelity-bank' },
  { code: '011', name: 'First Bank of Nigeria', slug: 'first-bank-of-nigeria' },
  { code: '214', name: 'First City Monument Bank', slug: 'first-city-monument-bank' },
  { code: '058', name: 'Guaranty Trust Bank', slug: 'guaranty-trust-bank' },
  { code: '101', name: 'Providus Bank', slug: 'providus-bank' },
  { code: '221', name: 'Stanbic IBTC Bank', slug: 'stanbic-ibtc-bank' },
  { code: '232', name: 'Sterling Bank', slug: 'sterling-bank' },
  { code: '032', name: 'Union Bank of Nigeria', slug: 'union-bank-of-nigeria' },
  { code: '033', name: 'United Bank For Africa', slug: 'united-bank-for-africa' },
  { code: '035', name: 'Wema Bank', slug: 'wema-bank' },
  { code: '057', name: 'Zenith Bank', slug: 'zenith-bank' },
];

export function institution(code: string): Institution | undefined {
  return INSTITUTIONS.find((candidate) => candidate.code === code);
}

/** Where virtual accounts are opened, the first being where they go without a preference. */
export const ACCOUNT_ISSUERS = [
  { code: '035', serialBase: 730_000_000 },
  { code: '101', serialBase: 510_000_000 },
] as const;

/**
 * The issuer a `preferred_bank` hint names — by code, slug or name, in any case — or the first
 * one. The hint is a wish: one this bank cannot honour opens the account at its default bank.
 */
export function issuerFor(preferredBank: string | undefined): (typeof ACCOUNT_ISSUERS)[number] {
  const wish = preferredBank?.trim().toLowerCase();
  const named = ACCOUNT_ISSUERS.find((issuer) => {
    const known = institution(issuer.code)!;
    return wish === known.code || wish === known.slug || wish === known.name.toLowerCase();
  });
  return named ?? ACCOUNT_ISSUERS[0];
}

const NUBAN_WEIGHTS = [3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3];

/** A 10-digit NUBAN: the 9-digit serial and the CBN check digit over bank code and serial. */
export function nuban(bankCode: string, serial: number): string {
  const digits = `${bankCode}${String(serial).padStart(9, '0')}`;
  const sum = [...digits].reduce((total, digit, i) => total + Number(digit) * NUBAN_WEIGHTS[i]!, 0);
  return `${digits.slice(3)}${(10 - (sum % 10)) % 10}`;
}

const GIVEN = [
  'ADAOBI',
  'BOLA',
  'CHIOMA',
  'DAYO',
  'EFE',
  'FOLAKE',
  'GODWIN',
  'HAUWA',
  'IKENNA',
  'JUMOKE',
  'KUNLE',
  'NNEKA',
];
const FAMILY = ['ABUBAKAR', 'BALOGUN', 'EKWUEME', 'IDOWU', 'MBAH', 'NWACHUKWU', 'OGUNDIPE', 'ONYEKA', 'SANI', 'UDOH'];

/** The holder's name for any account number this bank did not open: the same number, the same name. */
export function holderName(accountNumber: string): string {
  let hash = 0;
  for (const char of accountNumber) hash = (hash * 31 + char.charCodeAt(0)) >>> 0;
  return `${GIVEN[hash % GIVEN.length]} ${FAMILY[(hash >>> 4) % FAMILY.length]}`;
}
