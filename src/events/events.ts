// The tenant event log. Events are written in the same transaction as the state change that
// causes them, keyed by what caused them (`source_key`), so a retried activity writes each once.
// Webhook delivery fans out from this table.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';

export interface EventInput {
  tenantId: string;
  type: string;
  /** What caused the event, e.g. `transfer:<id>:settled`; unique. */
  sourceKey: string;
  payload: Record<string, unknown>;
}

/** Inserts the event unless one with the same source key exists; returns its id either way. */
export async function recordEvent(em: EntityManager, input: EventInput): Promise<string> {
  const [inserted] = await em.execute<{ id: string }[]>(
    `insert into events (id, tenant_id, type, source_key, payload) values (?, ?, ?, ?, ?)
     on conflict (source_key) do nothing returning id`,
    [randomUUID(), input.tenantId, input.type, input.sourceKey, JSON.stringify(input.payload)],
  );
  if (inserted) return inserted.id;
  const [existing] = await em.execute<{ id: string }[]>('select id from events where source_key = ?', [
    input.sourceKey,
  ]);
  return existing!.id;
}
