// A wallet statement as CSV (RFC 4180, a header line, oldest first as a bank statement reads): what
// the tenant CLI's `statement --csv` and the operator's `admin wallet statement --csv` both print,
// from the items of GET /api/v1/wallet/transactions. A cell a spreadsheet would run as a formula
// (starting with = + - @, tab or carriage return: CSV injection) is prefixed with `'`; numbers
// stay numbers.
import type { paths } from './schema.ts';

/** One item of GET /api/v1/wallet/transactions, as the generated schema (./schema.ts) has it. */
export type StatementCsvItem =
  paths['/api/v1/wallet/transactions']['get']['responses'][200]['content']['application/json']['data']['items'][number];

export const STATEMENT_CSV_COLUMNS = [
  'created_at',
  'id',
  'entry_id',
  'type',
  'amount_minor',
  'balance_after_minor',
  'reference',
  'resource_type',
  'resource_id',
] as const;

function csvCell(value: string | number | null): string {
  if (value === null) return '';
  let text = String(value);
  if (typeof value === 'string' && /^[=+\-@\t\r]/.test(text)) text = `'${text}`;
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** Items as the API lists them (newest first), written oldest first. */
export function statementCsv(items: readonly StatementCsvItem[]): string {
  const lines = [STATEMENT_CSV_COLUMNS.join(',')];
  for (const item of [...items].reverse()) {
    const cells = [
      item.created_at,
      item.id,
      item.entry_id,
      item.type,
      item.amount_minor,
      item.balance_after_minor,
      item.reference,
      item.resource.type,
      item.resource.id,
    ];
    lines.push(cells.map(csvCell).join(','));
  }
  return `${lines.join('\r\n')}\r\n`;
}
