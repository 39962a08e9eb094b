// Identity customers (decisions §7): behind the tenant feature `identity_customers` (403
// FORBIDDEN otherwise), replay-safe by external_reference, event identity.customer.created.
import type { MikroORM } from '@mikro-orm/postgresql';
import { recordEvent } from '../events/events.ts';
import { ApiError } from '../http/errors.ts';
import type { ResolvedKey } from '../tenants/tenants.ts';
import type { CreateCustomerBody, CustomerView } from './schemas.ts';
import { type CustomerRow, customerById, customerByReference, insertCustomer } from './store.ts';
import { isUuid } from '../http/ids.ts';

export function customerView(row: CustomerRow): CustomerView {
  return {
    id: row.id,
    external_reference: row.external_reference,
    first_name: row.first_name,
    last_name: row.last_name,
    email: row.email ?? null,
    phone: row.phone ?? null,
    country: row.country,
    metadata: row.metadata ?? null,
    kyc_status: row.kyc_status,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export class IdentityService {
  private readonly orm: MikroORM;

  constructor(deps: { orm: MikroORM }) {
    this.orm = deps.orm;
  }

  /** 201 with the new customer, or 200 with the one this external_reference already made. */
  async create(tenant: ResolvedKey, body: CreateCustomerBody): Promise<{ status: 200 | 201; customer: CustomerView }> {
    requireFeature(tenant);
    return this.orm.em.fork().transactional(async (tx) => {
      const inserted = await insertCustomer(tx, tenant.tenantId, body);
      if (!inserted) {
        const existing = await customerByReference(tx, tenant.tenantId, body.external_reference);
        return { status: 200 as const, customer: customerView(existing!) };
      }
      await recordEvent(tx, {
        tenantId: tenant.tenantId,
        type: 'identity.customer.created',
        sourceKey: `identity_customer:${inserted.id}:created`,
        payload: customerView(inserted),
      });
      return { status: 201 as const, customer: customerView(inserted) };
    });
  }

  async get(tenant: ResolvedKey, id: string): Promise<CustomerView> {
    requireFeature(tenant);
    const customer = isUuid(id) ? await customerById(this.orm.em.fork(), tenant.tenantId, id) : null;
    if (!customer) throw ApiError.notFound(`identity customer ${id}`);
    return customerView(customer);
  }
}

function requireFeature(tenant: ResolvedKey): void {
  if (!tenant.features.includes('identity_customers')) {
    throw new ApiError('forbidden', 'identity customers are not enabled for this tenant');
  }
}
