// The only code that touches `identity_customers`: typed rows from the MikroORM entity below,
// properties named as their columns.
import { randomUUID } from 'node:crypto';
import { type InferEntity, p } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { tableEntity, tenantOwned, timestamps } from '../db/columns.ts';
import type { CreateCustomerBody } from './schemas.ts';

export const IdentityCustomer = tableEntity('IdentityCustomer', 'identity_customers', {
  ...tenantOwned(),
  external_reference: p.string(),
  first_name: p.string(),
  last_name: p.string(),
  email: p.string().nullable(),
  phone: p.string().nullable(),
  country: p.string(),
  metadata: p.json<Record<string, unknown>>().nullable(),
  kyc_status: p.string().default('unverified'),
  ...timestamps(),
});
export type CustomerRow = InferEntity<typeof IdentityCustomer>;

/** Inserts the customer unless the tenant has one with this external_reference; null then. */
export async function insertCustomer(
  em: EntityManager,
  tenantId: string,
  body: CreateCustomerBody,
): Promise<CustomerRow | null> {
  const id = randomUUID();
  const inserted = await em
    .createQueryBuilder(IdentityCustomer)
    .insert({
      id,
      tenant_id: tenantId,
      external_reference: body.external_reference,
      first_name: body.first_name,
      last_name: body.last_name,
      email: body.email ?? null,
      phone: body.phone ?? null,
      country: body.country ?? 'NG',
      metadata: body.metadata ?? null,
    })
    .onConflict(['tenant_id', 'external_reference'])
    .ignore()
    .execute<{ affectedRows: number }>('run');
  return inserted.affectedRows > 0 ? em.findOneOrFail(IdentityCustomer, { id }) : null;
}

export async function customerByReference(em: EntityManager, tenantId: string, externalReference: string) {
  return em.findOne(IdentityCustomer, { tenant_id: tenantId, external_reference: externalReference });
}

/** The tenant's customer with this id; null for another tenant's. */
export async function customerById(em: EntityManager, tenantId: string, id: string) {
  return em.findOne(IdentityCustomer, { id, tenant_id: tenantId });
}
