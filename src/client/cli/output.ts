// How the tenant CLI prints: one JSON document per result with --json, else a readable table (or,
// for one object, `key  value` lines). Nothing but results goes to stdout; notes go to stderr.

type Row = Record<string, unknown>;

function cell(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  return JSON.stringify(value);
}

/** Rows as aligned columns, the columns given or those of the first row. */
export function table(rows: readonly Row[], columns?: readonly string[]): string {
  if (rows.length === 0) return '(none)\n';
  const names = columns ?? Object.keys(rows[0]!);
  const widths = names.map((name) => Math.max(name.length, ...rows.map((row) => cell(row[name]).length)));
  const line = (values: string[]) =>
    values
      .map((value, i) => value.padEnd(widths[i]!))
      .join('  ')
      .trimEnd();
  return `${[line(names.map((name) => name.toUpperCase())), ...rows.map((row) => line(names.map((name) => cell(row[name]))))].join('\n')}\n`;
}

/** One object as `key  value` lines. */
export function record(row: Row): string {
  const width = Math.max(...Object.keys(row).map((key) => key.length));
  return `${Object.entries(row)
    .map(([key, value]) => `${key.padEnd(width)}  ${cell(value)}`)
    .join('\n')}\n`;
}

export function print(json: boolean, value: unknown, human: () => string): void {
  process.stdout.write(json ? `${JSON.stringify(value)}\n` : human());
}
