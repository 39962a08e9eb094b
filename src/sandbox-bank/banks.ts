// The sandbox bank's bank list (CBN / NIBSS institution codes of real Nigerian banks) and NUBAN
// account numbers: a 9-digit serial plus the CBN check digit computed over bank code and serial.

export interface Bank {
  code: string;
  name: string;
  slug: string;
}

export const BANKS: readonly Bank[] = [
  { code: '044', name: 'Access Bank', slug: 'access-bank' },
  { code: '023', name: 'Citibank Nigeria', slug: 'citibank-nigeria' },
  { code: '050', name: 'Ecobank Nigeria', slug: 'ecobank-nigeria' },
  { code: '070', name: 'Fidelity Bank', slug: 'fidelity-bank' },
  { code: '011', name: 'First Bank of Nigeria', slug: 'first-bank-of-nigeria' },
  { code: '214', name: 'First City Monument Bank', slug: 'first-city-monument-bank' },
  { code: '058', name: 'Guaranty Trust Bank', slug: 'guaranty-trust-bank' },
  { code: '030', name: 'Heritage Bank', slug: 'heritage-bank' },
  { code: '301', name: 'Jaiz Bank', slug: 'jaiz-bank' },
  { code: '082', name: 'Keystone Bank', slug: 'keystone-bank' },
  { code: '076', name: 'Polaris Bank', slug: 'polaris-bank' },
  { code: '101', name: 'Providus Bank', slug: 'providus-bank' },
  { code: '221', name: 'Stanbic IBTC Bank', slug: 'stanbic-ibtc-bank' },
  { code: '068', name: 'Standard Chartered Bank', slug: 'standard-chartered-bank' },
  { code: '232', name: 'Sterling Bank', slug: 'sterling-bank' },
  { code: '100', name: 'Suntrust Bank', slug: 'suntrust-bank' },
  { code: '032', name: 'Union Bank of Nigeria', slug: 'union-bank-of-nigeria' },
  { code: '033', name: 'United Bank For Africa', slug: 'united-bank-for-africa' },
  { code: '215', name: 'Unity Bank', slug: 'unity-bank' },
  { code: '035', name: 'Wema Bank', slug: 'wema-bank' },
  { code: '057', name: 'Zenith Bank', slug: 'zenith-bank' },
];

export function bankByCode(code: string): Bank | undefined {
  return BANKS.find((bank) => bank.code === code);
}

const NUBAN_WEIGHTS = [3, 7, 3, 3, 7, 3, 3, 7, 3, 3, 7, 3];

/** The CBN NUBAN check digit for a 3-digit bank code and a 9-digit serial. */
export function nubanCheckDigit(bankCode: string, serial: string): number {
  if (!/^\d{3}$/.test(bankCode) || !/^\d{9}$/.test(serial))
    throw new RangeError('bank code must be 3 digits and serial 9');
  const digits = `${bankCode}${serial}`.split('').map(Number);
  const sum = digits.reduce((total, digit, i) => total + digit * NUBAN_WEIGHTS[i]!, 0);
  return (10 - (sum % 10)) % 10;
}

export function nuban(bankCode: string, serialNumber: number): string {
  const serial = String(serialNumber).padStart(9, '0');
  return `${serial}${nubanCheckDigit(bankCode, serial)}`;
}

export function isValidNuban(bankCode: string, accountNumber: string): boolean {
  return (
    /^\d{10}$/.test(accountNumber) && nubanCheckDigit(bankCode, accountNumber.slice(0, 9)) === Number(accountNumber[9])
  );
}

const FIRST = [
  'Adaeze',
  'Babajide',
  'Chinedu',
  'Damilola',
  'Emeka',
  'Funmilayo',
  'Gbenga',
  'Halima',
  'Ifeoma',
  'Jide',
  'Kemi',
  'Ladi',
  'Musa',
  'Ngozi',
  'Olumide',
  'Tunde',
  'Uche',
  'Yetunde',
  'Zainab',
  'Segun',
];
const LAST = [
  'Adeyemi',
  'Bello',
  'Chukwu',
  'Danjuma',
  'Eze',
  'Fashola',
  'Garba',
  'Ibrahim',
  'Johnson',
  'Kalu',
  'Lawal',
  'Mohammed',
  'Nwosu',
  'Obi',
  'Okafor',
  'Olawale',
  'Suleiman',
  'Uzor',
  'Williams',
  'Yusuf',
];

/** A stable, realistic account name for any account number (the same number, the same name). */
export function accountNameFor(accountNumber: string): string {
  let hash = 2166136261;
  for (const char of accountNumber) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619) >>> 0;
  return `${FIRST[hash % FIRST.length]} ${LAST[(hash >>> 8) % LAST.length]}`.toUpperCase();
}
