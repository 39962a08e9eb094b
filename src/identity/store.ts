// The only code that touches `identity_customers`: typed rows in, views out.
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';
import { isUuid } from '../http/ids.ts';
import type { CreateCustomerBody, CustomerView } from './schemas.ts';

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

export function customerView(row: CustomerRow): CustomerView {
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

/** Inserts the customer unless the tenant has one with this external_reference; null then. */
export async function insertCustomer(
  em: EntityManager,
  tenantId: string,
  body: CreateCustomerBody,
): Promise<CustomerView | null> {
  const [inserted] = await em.execute<CustomerRow[]>(
    `insert into identity_customers (id, tenant_id, external_reference, first_name, last_name, email, phone, country, metadata)
     values (?, ?, ?, ?, ?, ?, ?, ?, ?) on conflict on constraint identity_customers_reference do nothing returning *`,
    [
      randomUUID(),
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
  return inserted ? customerView(inserted) : null;
}

export async function customerByReference(
  em: EntityManager,
  tenantId: string,
  externalReference: string,
): Promise<CustomerView | undefined> {
  const [row] = await em.execute<CustomerRow[]>(
    'select * from identity_customers where tenant_id = ? and external_reference = ?',
    [tenantId, externalReference],
  );
  return row ? customerView(row) : undefined;
}

/** The tenant's customer with this id; undefined for another tenant's, or a malformed id. */
export async function customerById(em: EntityManager, tenantId: string, id: string): Promise<CustomerView | undefined> {
  if (!isUuid(id)) return undefined;
  const [row] = await em.execute<CustomerRow[]>('select * from identity_customers where id = ? and tenant_id = ?', [
    id,
    tenantId,
  ]);
  return row ? customerView(row) : undefined;
}
