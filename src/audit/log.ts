// The only code that writes or reads audit_log (migration 0034): the tenant's audit log, per key
// mode (decisions §19). Every key made, rolled or revoked, every change of the transfer policy and
// every approval decision is one entry, written in the same transaction as the change it records
// (recordAuditEntry takes the caller's entity manager, inside its transaction). `tenantId` is the
// id of the tenant's mode row, as every store scopes by.
import { randomUUID } from 'node:crypto';
import { type InferEntity, p } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyRequest } from 'fastify';
import { NEWEST_FIRST, createdAt, tableEntity, tenantOwned } from '../db/columns.ts';
import { type Page, type Window, pageOf } from '../db/pages.ts';

export const AUDIT_ACTIONS = [
  'api_key.created',
  'api_key.rolled',
  'api_key.revoked',
  'transfer_policy.updated',
  'transfer.approved',
  'transfer.rejected',
  'batch.approved',
  'batch.rejected',
  'team.invited',
  'team.role_changed',
  'team.removed',
  'session.signed_in',
] as const;
export type AuditAction = (typeof AUDIT_ACTIONS)[number];

export const ACTOR_TYPES = ['key', 'user', 'operator'] as const;
export type ActorType = (typeof ACTOR_TYPES)[number];

/** Who did it: a key (its id and name), a console user, or an operator (as admin_audit names them). */
export interface AuditActor {
  type: ActorType;
  id: string;
  name: string;
}

export interface AuditEntryInput {
  /** The tenant mode's row id (ResolvedKey.tenantId). */
  tenantId: string;
  action: AuditAction;
  actor: AuditActor;
  /** What it was done to: `{type: 'api_key' | 'transfer_policy' | 'transfer' | 'batch', id}`. */
  target: { type: string; id: string };
  /** The caller's address (request.ip); null for the operator CLI. */
  ip: string | null;
  /** The request's id (request.id); null for the operator CLI. */
  requestId: string | null;
  details?: Record<string, unknown>;
}

export const AuditLogEntry = tableEntity('AuditLogEntry', 'audit_log', {
  ...tenantOwned(),
  action: p.text(),
  actor_type: p.text(),
  actor_id: p.text(),
  actor_name: p.text(),
  target_type: p.text(),
  target_id: p.text(),
  ip: p.text().nullable(),
  request_id: p.text().nullable(),
  details: p.json<Record<string, unknown>>(),
  ...createdAt(),
});
export type AuditLogRow = InferEntity<typeof AuditLogEntry>;

/** Records one entry, in the caller's transaction when `em` is one: the entry's id. */
export async function recordAuditEntry(em: EntityManager, entry: AuditEntryInput): Promise<string> {
  const id = randomUUID();
  await em.insert(AuditLogEntry, {
    id,
    tenant_id: entry.tenantId,
    action: entry.action,
    actor_type: entry.actor.type,
    actor_id: entry.actor.id,
    actor_name: entry.actor.name,
    target_type: entry.target.type,
    target_id: entry.target.id,
    ip: entry.ip,
    request_id: entry.requestId,
    details: entry.details ?? {},
  });
  return id;
}

export interface AuditFilter {
  action?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

/** A page of the tenant mode's entries, newest first; `from` inclusive, `to` exclusive. */
export async function listAuditEntries(
  em: EntityManager,
  tenantId: string,
  filter: AuditFilter,
  window: Window,
): Promise<Page<AuditLogRow>> {
  const created = {
    ...(filter.from ? { $gte: filter.from } : {}),
    ...(filter.to ? { $lt: filter.to } : {}),
  };
  return pageOf(
    em,
    AuditLogEntry,
    {
      tenant_id: tenantId,
      ...(filter.action ? { action: filter.action } : {}),
      ...(filter.from || filter.to ? { created_at: created } : {}),
    },
    NEWEST_FIRST,
    window,
  );
}

/** The tenant mode's entry with this id (a uuid); null for another tenant's or mode's. */
export async function auditEntryById(em: EntityManager, tenantId: string, id: string): Promise<AuditLogRow | null> {
  return em.findOne(AuditLogEntry, { id, tenant_id: tenantId });
}

/** An entry as the API and the operator CLI show it (decisions §19). */
export function auditEntryView(row: AuditLogRow) {
  return {
    id: row.id,
    action: row.action,
    actor: { type: row.actor_type as ActorType, id: row.actor_id, name: row.actor_name },
    target: { type: row.target_type, id: row.target_id },
    ip: row.ip ?? null,
    request_id: row.request_id ?? null,
    details: row.details,
    created_at: row.created_at.toISOString(),
  };
}

/** Who made a request with an API key, and from where: an entry's actor, ip and request id. */
export interface RequestActor {
  actor: AuditActor;
  ip: string;
  requestId: string;
}

/** The actor of an authenticated request: its key, by id and name (decisions §19). */
export function requestActor(request: FastifyRequest): RequestActor {
  const key = request.auth;
  if (!key) throw new Error(`route ${request.routeOptions.url} records an audit entry without authentication`);
  return { actor: actorOf(key), ip: request.ip, requestId: request.id };
}

/** Who a key resolution is: the key, or the console's person acting through it (decisions §22). */
export function actorOf(key: { keyId: string; keyName: string; user?: { id: string; email: string } }): AuditActor & {
  type: 'key' | 'user';
} {
  return key.user
    ? { type: 'user', id: key.user.id, name: key.user.email }
    : { type: 'key', id: key.keyId, name: key.keyName };
}
