// The sandbox bank's bank list (CBN / NIBSS institution codes of real Nigerian banks, as the
// contract's `GET /banks` carries them) and NUBAN account numbers: a 9-digit serial plus the CBN
// check digit computed over bank code and serial. The generic test bank (test/simulators/) lists a
// part of these banks and makes its account numbers the same way.
import type { Bank } from '../connectors/generic/contract.ts';

export const BANKS: readonly Bank[] = [
  { code: '044', name: 'Access Bank' },
  { code: '023', name: 'Citibank Nigeria' },
  { code: '050', name: 'Ecobank Nigeria' },
  { code: '070', name: 'Fidelity Bank' },
  { code: '011', name: 'First Bank of Nigeria' },
  { code: '214', name: 'First City Monument Bank' },
  { code: '058', name: 'Guaranty Trust Bank' },
  { code: '030', name: 'Heritage Bank' },
  { code: '301', name: 'Jaiz Bank' },
  { code: '082', name: 'Keystone Bank' },
  { code: '076', name: 'Polaris Bank' },
  { code: '101', name: 'Providus Bank' },
  { code: '221', name: 'Stanbic IBTC Bank' },
  { code: '068', name: 'Standard Chartered Bank' },
  { code: '232', name: 'Sterling Bank' },
  { code: '100', name: 'Suntrust Bank' },
  { code: '032', name: 'Union Bank of Nigeria' },
  { code: '033', name: 'United Bank For Africa' },
  { code: '215', name: 'Unity Bank' },
  { code: '035', name: 'Wema Bank' },
  { code: '057', name: 'Zenith Bank' },
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
