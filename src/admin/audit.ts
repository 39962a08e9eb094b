// The only code that writes or reads admin_audit (migration 0012): one row per run of a command
// that changes something, however it ended — who ran it, the command, its arguments as typed
// (secrets never: the CLI takes none), when, and its outcome with the error.
import { type InferEntity, p } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { randomUUID } from 'node:crypto';
import { tableEntity } from '../db/columns.ts';
import type { AuditOutcome } from './errors.ts';

export const AdminAudit = tableEntity('AdminAudit', 'admin_audit', {
  id: p.uuid().primary(),
  operator: p.text(),
  command: p.text(),
  arguments: p.json<Record<string, unknown>>(),
  outcome: p.enum(['succeeded', 'refused', 'failed'] as const),
  error: p.text().nullable(),
  at: p.datetime().defaultRaw('now()'),
});
type AuditRow = InferEntity<typeof AdminAudit>;

export interface AuditRecord {
  operator: string;
  command: string;
  arguments: Record<string, unknown>;
  outcome: AuditOutcome;
  error?: string;
}

export async function recordAudit(em: EntityManager, record: AuditRecord): Promise<void> {
  await em.insert(AdminAudit, { id: randomUUID(), ...record, error: record.error ?? null });
}

/** The latest rows, newest first. */
export async function latestAudit(em: EntityManager, count: number) {
  const rows: AuditRow[] = await em.find(AdminAudit, {}, { orderBy: { at: 'desc', id: 'asc' }, limit: count });
  return rows.map((row) => ({
    id: row.id,
    operator: row.operator,
    command: row.command,
    arguments: row.arguments,
    outcome: row.outcome,
    error: row.error,
    at: row.at.toISOString(),
  }));
}
