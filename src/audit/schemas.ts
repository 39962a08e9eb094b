// The tenant's audit log over HTTP (decisions §19): the list's filters and an entry's shape.
import { z } from 'zod';
import { PaginationQuery, listOf } from '../http/pagination.ts';
import { ACTOR_TYPES, AUDIT_ACTIONS } from './log.ts';

const instant = z.iso.datetime({ offset: true, error: 'must be an ISO 8601 date-time, e.g. 2026-12-01T00:00:00Z' });

export const AuditLogQuery = PaginationQuery.extend({
  action: z.enum(AUDIT_ACTIONS, { error: `must be one of ${AUDIT_ACTIONS.join(', ')}` }).optional(),
  /** Entries made at or after this instant. */
  from: instant.optional(),
  /** Entries made before this instant. */
  to: instant.optional(),
});

export const AuditEntryParams = z.object({ id: z.string() });

export const AuditEntryView = z.object({
  id: z.string(),
  action: z.string(),
  actor: z.object({ type: z.enum(ACTOR_TYPES), id: z.string(), name: z.string() }),
  target: z.object({ type: z.string(), id: z.string() }),
  ip: z.string().nullable(),
  request_id: z.string().nullable(),
  details: z.record(z.string(), z.unknown()),
  created_at: z.string(),
});

export const AuditEntryList = listOf(AuditEntryView);
