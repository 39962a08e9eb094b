// Several owners' writes in ONE statement, for a hot path that must not pay a round trip per table
// (the card decision, src/cards/decision.ts). Each table's owner contributes its own step: a
// data-modifying statement in its own SQL, with its own $1, $2… (rows as arrays through
// `unnest`, so the text never changes with how many there are), and how many rows it must write.
// `runWrite` chains the steps as CTEs of one statement, numbers their parameters one after the
// other, and runs it as a named prepared statement, composed once per name (a name given other
// steps than it was composed of is refused).
// A step that wrote another number of rows than it declared throws, and the caller's transaction
// (which must roll back on a throw) keeps nothing of it.
import { type SqlClient, type SqlValue, prepared } from './numbered-sql.ts';

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

/** The steps as one statement: each a CTE, its placeholders moved past those of the steps before it. */
export function composeWrite(steps: readonly WriteStep[]): { text: string; values: SqlValue[] } {
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
  const counts = steps.map((step) => `(select count(*) from ${step.name})::int as "${step.name}"`);
  return { text: `with\n${ctes.join(',\n')}\nselect ${counts.join(',\n       ')}`, values };
}

/** Each prepared write's composed text, by name, with the steps it was composed of. */
const composed = new Map<string, { source: string; arity: readonly number[]; text: string }>();

/**
 * Runs the steps as one named prepared statement on the caller's connection, inside its
 * transaction, and checks every step's count. `what` names the write in the error. The text is
 * composed once per name (the hot path pays only for its values); a name asked to run other steps,
 * or steps with another number of values, than it was composed of is refused before anything runs.
 */
export async function runWrite(
  client: SqlClient,
  name: string,
  what: string,
  steps: readonly WriteStep[],
): Promise<void> {
  const source = steps.map((step) => `${step.name}\n${step.text}`).join('\n');
  const arity = steps.map((step) => step.values.length);
  let statement = composed.get(name);
  if (!statement) {
    statement = { source, arity, text: composeWrite(steps).text };
    composed.set(name, statement);
  } else if (statement.source !== source || statement.arity.some((count, i) => count !== arity[i])) {
    throw new Error(`prepared write ${name} was composed of other steps than these`);
  }
  const { rows } = await prepared(
    client,
    name,
    statement.text,
    steps.flatMap((step) => step.values),
  );
  const written = rows[0] as Record<string, number>;
  for (const step of steps) {
    if (written[step.name] !== step.rows) {
      throw new Error(`${what}: wrote ${written[step.name]} ${step.name}, expected ${step.rows}`);
    }
  }
}
