// The institutions the test bank lists (a part of the sandbox bank's CBN / NIBSS list, in its
// order), the two it opens virtual accounts at, NUBAN account numbers for those (made as the sandbox
// bank makes them), and a stable made-up holder name of its own for any other account number. It
// shares the contract (src/connectors/generic/contract.ts) and the sandbox bank's bank facts, never
// the gateway's code.
import { type Bank, bankSlug } from '../../../src/connectors/generic/contract.ts';
import { bankByCode } from '../../../src/sandbox-bank/banks.ts';

const LISTED = ['044', '050', '070', '011', '214', '058', '101', '221', '232', '032', '033', '035', '057'];

export const INSTITUTIONS: readonly Bank[] = LISTED.map((code) => bankByCode(code)!);

export function institution(code: string): Bank | undefined {
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
    return wish === known.code || wish === bankSlug(known.name) || wish === known.name.toLowerCase();
  });
  return named ?? ACCOUNT_ISSUERS[0];
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
