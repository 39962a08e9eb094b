// The tenant's audit log over HTTP (decisions §19): newest first, filtered by action and time, and
// one entry by id. Both need keys:write (src/http/scopes.ts); another tenant's or mode's entry is
// not found, as an unknown id is.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { tenantOf } from '../http/auth.ts';
import { ResourceErrorSchema, envelopeSchema, ok } from '../http/envelope.ts';
import { ApiError } from '../http/errors.ts';
import { isUuid } from '../http/ids.ts';
import { paginationView, windowOf } from '../http/pagination.ts';
import { routeSchemasOf } from '../http/route-docs.ts';
import { auditEntryById, auditEntryView, listAuditEntries } from './log.ts';
import { AuditEntryList, AuditEntryParams, AuditEntryView, AuditLogQuery } from './schemas.ts';

const doc = routeSchemasOf('audit log');

export function auditLogRoutes(app: FastifyInstance, deps: { orm: MikroORM }) {
  const typed = app.withTypeProvider<ZodTypeProvider>();
  const errors = { 400: ResourceErrorSchema, 401: ResourceErrorSchema, 403: ResourceErrorSchema };

  typed.get(
    '/api/v1/audit-log',
    {
      schema: doc("The audit log of the caller's tenant and mode, newest first", {
        description: '`from` is inclusive, `to` exclusive.',
        querystring: AuditLogQuery,
        response: { 200: envelopeSchema(AuditEntryList), ...errors },
      }),
    },
    async (request) => {
      const { action, from, to } = request.query;
      const window = windowOf(request.query);
      const page = await listAuditEntries(
        deps.orm.em.fork(),
        tenantOf(request).tenantId,
        { action, from: from ? new Date(from) : undefined, to: to ? new Date(to) : undefined },
        window,
      );
      return ok(request, { items: page.rows.map(auditEntryView), pagination: paginationView(window, page.total) });
    },
  );

  typed.get(
    '/api/v1/audit-log/:id',
    {
      schema: doc('One entry of the audit log', {
        params: AuditEntryParams,
        response: { 200: envelopeSchema(AuditEntryView), ...errors, 404: ResourceErrorSchema },
      }),
    },
    async (request) => {
      const { id } = request.params;
      const row = isUuid(id) ? await auditEntryById(deps.orm.em.fork(), tenantOf(request).tenantId, id) : null;
      if (!row) throw ApiError.notFound(`audit entry ${id}`);
      return ok(request, auditEntryView(row));
    },
  );
}
