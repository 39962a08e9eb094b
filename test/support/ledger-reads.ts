// Reads of a transfer's money trail that several test files assert on: its journal entries (by
// kind, in order) and its events.
import type { MikroORM } from '../../src/orm.ts';

export async function transferEntries(orm: MikroORM, transferId: string): Promise<string[]> {
  const rows = await orm.em
    .fork()
    .execute<{ kind: string }[]>(`select kind from journal_entries where idempotency_key like ? order by created_at`, [
      `transfer:${transferId}:%`,
    ]);
  return rows.map((row) => row.kind);
}

export async function transferEvents(
  orm: MikroORM,
  transferId: string,
): Promise<{ type: string; payload: Record<string, unknown> }[]> {
  return orm.em
    .fork()
    .execute<{ type: string; payload: Record<string, unknown> }[]>(
      `select type, payload from events where payload->>'id' = ? order by created_at`,
      [transferId],
    );
}
