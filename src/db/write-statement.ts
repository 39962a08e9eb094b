// Several owners' writes in ONE statement, for a hot path that must not pay a round trip per table
// (the card decision, src/cards/decision.ts). Each table's owner contributes its own step: a
// data-modifying statement in its own SQL, with its own $1, $2… (rows as arrays through
// `unnest`, so the text never changes with how many there are), and how many rows it must write.
// `writePart` chains the steps as CTEs of one statement, numbers their parameters one after the
// other, and gives it as a named statement (src/db/numbered-sql.ts), composed once per name (a name
// given other steps than it was composed of is refused).
// PostgreSQL itself checks each step's count (`gateway_rows_written`, migration 0047): a step that
// wrote another number of rows than it declared fails the statement, so the write can go in one
// round trip with the `commit` (`commitWith` of inPooledTransaction): the failure stops the
// commit, and the caller's transaction (closed on a throw) keeps nothing of it.
import type { NamedStatement, SqlValue } from './numbered-sql.ts';

export interface WriteStep {
  /** The step's CTE name: unique in the statement, and how a count that differs is reported. */
  name: string;
  /** `insert …`, `update …` or `delete …` ending in `returning …`: one row back per row written. */
  text: string;
  /** Its $1, $2…, in order. */
  values: readonly SqlValue[];
  /** How many rows it must write. */
  rows: number;
}

/**
 * The steps as one statement: each a CTE, its placeholders moved past those of the steps before it,
 * and each one's count answered. With `checked` (what the write is, for its error), PostgreSQL
 * checks each count against the step's `rows` (two more kinds of values at the end: the name, and
 * the counts) and fails the statement on one that differs; without it, the caller reads the counts.
 */
export function composeWrite(
  steps: readonly WriteStep[],
  checked?: { what: string },
): { text: string; values: SqlValue[] } {
  const names = new Set<string>();
  const values: SqlValue[] = [];
  const ctes = steps.map((step) => {
    if (!/^[a-z_]+$/.test(step.name) || names.has(step.name))
      throw new Error(`write step name ${step.name} is taken or not a name`);
    names.add(step.name);
    const offset = values.length;
    const text = step.text.trim().replace(/\$(\d+)/g, (_, n: string) => {
      if (Number(n) < 1 || Number(n) > step.values.length) {
        throw new Error(`write step ${step.name} names $${n} and has ${step.values.length} values`);
      }
      return `$${Number(n) + offset}`;
    });
    values.push(...step.values);
    return `  ${step.name} as (\n${text})`;
  });
  let counts = steps.map((step) => `(select count(*) from ${step.name})::int as "${step.name}"`);
  if (checked) {
    const whatAt = values.length + 1;
    values.push(checked.what, ...steps.map((step) => step.rows));
    counts = steps.map(
      (step, i) =>
        `gateway_rows_written($${whatAt}::text, '${step.name}', (select count(*) from ${step.name}), $${whatAt + 1 + i}::int) as "${step.name}"`,
    );
  }
  return { text: `with\n${ctes.join(',\n')}\nselect ${counts.join(',\n       ')}`, values };
}

/** Each write's composed text, by name, with the steps it was composed of. */
const composed = new Map<string, { source: string; arity: readonly number[]; text: string }>();

/**
 * The steps as a named statement (src/db/numbered-sql.ts `sendTogether`) for the caller's
 * transaction, to send alone or with the `commit` (`commitWith`). `what` names the write in the
 * error of a count that differs: "<what>: wrote <n> <step>, expected <m>". The text is composed once
 * per name (the hot path pays only for its values: the steps', then `what` and the counts, in the
 * order composeWrite numbers them); a name asked to run other steps, or steps with another number
 * of values, than it was composed of is refused before anything is sent.
 */
export function writePart(name: string, what: string, steps: readonly WriteStep[]): NamedStatement {
  const source = steps.map((step) => `${step.name}\n${step.text}`).join('\n');
  const arity = steps.map((step) => step.values.length);
  let statement = composed.get(name);
  if (!statement) {
    statement = { source, arity, text: composeWrite(steps, { what }).text };
    composed.set(name, statement);
  } else if (statement.source !== source || statement.arity.some((count, i) => count !== arity[i])) {
    throw new Error(`prepared write ${name} was composed of other steps than these`);
  }
  const values = [...steps.flatMap((step) => step.values), what, ...steps.map((step) => step.rows)];
  return { name, text: statement.text, values };
}
