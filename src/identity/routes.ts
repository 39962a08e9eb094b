// Identity customers (decisions §7): behind the tenant feature `identity_customers` (403
// FORBIDDEN otherwise), replay-safe by external_reference, event identity.customer.created.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { recordEvent } from '../events/events.ts';
import { tenantOf } from '../http/auth.ts';
import { Metadata } from '../http/hostile-input.ts';
import { ResourceErrorSchema, envelopeSchema, ok } from '../http/envelope.ts';
import { ApiError } from '../http/errors.ts';
import { isUuid } from '../http/ids.ts';

const regions = new Intl.DisplayNames(['en'], { type: 'region' });
/** A real ISO 3166-1 alpha-2 code (ICU names it; unknown codes come back unchanged). */
export function isCountryCode(code: string): boolean {
  return /^[A-Z]{2}$/.test(code) && regions.of(code) !== code && regions.of(code) !== 'Unknown Region';
}

export const CreateCustomerBody = z.object({
  external_reference: z.string({ error: 'is required' }).trim().min(1, 'is required').max(200),
  first_name: z.string({ error: 'is required' }).trim().min(1, 'is required').max(100),
  last_name: z.string({ error: 'is required' }).trim().min(1, 'is required').max(100),
  email: z.email('must be an email address').max(254).optional(),
  phone: z
    .string()
    .regex(/^\+[1-9]\d{6,14}$/, 'must be an E.164 number such as +2348012345678')
    .optional(),
  country: z.string().refine(isCountryCode, 'must be an ISO 3166 alpha-2 country code such as NG').optional(),
  metadata: Metadata.optional(),
});
type CreateCustomerBody = z.infer<typeof CreateCustomerBody>;

interface CustomerRow {
  id: string;
  external_reference: string;
  first_name: string;
  last_name: string;
  email: string | null;
  phone: string | null;
  country: string;
  metadata: Record<string, unknown> | null;
  kyc_status: string;
  created_at: Date;
  updated_at: Date;
}

function customerView(row: CustomerRow) {
  return {
    id: row.id,
    external_reference: row.external_reference,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email,
    phone: row.phone,
    country: row.country,
    metadata: row.metadata,
    kyc_status: row.kyc_status,
    created_at: new Date(row.created_at).toISOString(),
    updated_at: new Date(row.updated_at).toISOString(),
  };
}

function requireFeature(request: FastifyRequest) {
  const tenant = tenantOf(request);
  if (!tenant.features.includes('identity_customers')) {
    throw new ApiError('forbidden', 'identity customers are not enabled for this tenant');
  }
  return tenant;
}

async function createCustomer(orm: MikroORM, tenantId: string, body: CreateCustomerBody) {
  return orm.em.fork().transactional(async (tx) => {
    const id = randomUUID();
    const [inserted] = await tx.execute<CustomerRow[]>(
      `insert into identity_customers (id, tenant_id, external_reference, first_name, last_name, email, phone, country, metadata)
       values (?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict on constraint identity_customers_reference do nothing returning *`,
      [
        id,
        tenantId,
        body.external_reference,
        body.first_name,
        body.last_name,
        body.email ?? null,
        body.phone ?? null,
        body.country ?? 'NG',
        body.metadata ? JSON.stringify(body.metadata) : null,
      ],
    );
    if (!inserted) {
      const [existing] = await tx.execute<CustomerRow[]>(
        'select * from identity_customers where tenant_id = ? and external_reference = ?',
        [tenantId, body.external_reference],
      );
      return { status: 200 as const, customer: customerView(existing!) };
    }
    await recordEvent(tx, {
      tenantId,
      type: 'identity.customer.created',
      sourceKey: `identity_customer:${id}:created`,
      payload: customerView(inserted),
    });
    return { status: 201 as const, customer: customerView(inserted) };
  });
}

export function identityRoutes(app: FastifyInstance, deps: { orm: MikroORM }) {
  const typed = app.withTypeProvider<ZodTypeProvider>();
  const security = [{ apiKey: [] }];

  typed.post(
    '/api/v1/identity/customers',
    {
      schema: {
        tags: ['identity'],
        summary: 'Create an identity customer (tenant feature identity_customers)',
        security,
        body: CreateCustomerBody,
        response: {
          200: envelopeSchema(z.unknown()),
          201: envelopeSchema(z.unknown()),
          400: ResourceErrorSchema,
          401: ResourceErrorSchema,
          403: ResourceErrorSchema,
        },
      },
    },
    async (request, reply) => {
      const tenant = requireFeature(request);
      const { status, customer } = await createCustomer(deps.orm, tenant.tenantId, request.body);
      return reply.status(status).send(ok(request, customer));
    },
  );

  typed.get(
    '/api/v1/identity/customers/:id',
    {
      schema: { tags: ['identity'], summary: 'One identity customer', security, params: z.object({ id: z.string() }) },
    },
    async (request) => {
      const tenant = requireFeature(request);
      const [row] = isUuid(request.params.id)
        ? await deps.orm.em
            .fork()
            .execute<CustomerRow[]>('select * from identity_customers where id = ? and tenant_id = ?', [
              request.params.id,
              tenant.tenantId,
            ])
        : [];
      if (!row) throw ApiError.notFound(`identity customer ${request.params.id}`);
      return ok(request, customerView(row));
    },
  );
}
