// The only code that touches `identity_customers` and `bvn_verifications`: typed rows from the
// MikroORM entities below, properties named as their columns.
import { randomUUID } from 'node:crypto';
import { type InferEntity, LockMode, p, raw } from '@mikro-orm/core';
import type { EntityManager } from '@mikro-orm/postgresql';
import { createdAt, tableEntity, tenantOwned, timestamps } from '../db/columns.ts';
import type { BvnFailureReason, BvnOutcome } from './bvn.ts';
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
  bvn_last4: p.string().nullable(),
  kyc_failure_reason: p.string().nullable(),
  ...timestamps(),
});
export type CustomerRow = InferEntity<typeof IdentityCustomer>;

export const BVN_VERIFICATION_STATUSES = ['pending', 'verified', 'verification_failed', 'abandoned'] as const;
export type BvnVerificationStatus = (typeof BVN_VERIFICATION_STATUSES)[number];

export const BvnVerification = tableEntity('BvnVerification', 'bvn_verifications', {
  ...tenantOwned(),
  customer_id: p.uuid(),
  status: p.enum(BVN_VERIFICATION_STATUSES),
  failure_reason: p.enum(['bvn_not_found', 'name_mismatch'] as const).nullable(),
  /** Hex HMAC-SHA256 of the BVN under the server's key (src/identity/bvn.ts). */
  bvn_hash: p.string(),
  bvn_last4: p.string(),
  /** The sealed BVN the lookup reads; null once the verification has ended. */
  bvn_ciphertext: p.string().nullable(),
  ...createdAt(),
  completed_at: p.datetime().nullable(),
});
export type BvnVerificationRow = InferEntity<typeof BvnVerification>;

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

/** The tenant's customer, locked until the transaction ends: verification requests for it queue here. */
export async function lockCustomer(em: EntityManager, tenantId: string, id: string): Promise<CustomerRow | null> {
  return em.findOne(IdentityCustomer, { id, tenant_id: tenantId }, { lockMode: LockMode.PESSIMISTIC_WRITE });
}

export async function pendingVerificationOf(em: EntityManager, customerId: string) {
  return em.findOne(BvnVerification, { customer_id: customerId, status: 'pending' });
}

export async function findVerification(em: EntityManager, id: string) {
  return em.findOne(BvnVerification, { id });
}

/** A pending verification, and the customer showing it: kyc_status `pending`, its BVN's last 4. */
export async function insertVerification(
  em: EntityManager,
  row: { id: string; tenantId: string; customerId: string; bvnHash: string; bvnLast4: string; sealedBvn: string },
): Promise<void> {
  await em.insert(BvnVerification, {
    id: row.id,
    tenant_id: row.tenantId,
    customer_id: row.customerId,
    status: 'pending',
    failure_reason: null,
    bvn_hash: row.bvnHash,
    bvn_last4: row.bvnLast4,
    bvn_ciphertext: row.sealedBvn,
  });
  await em.nativeUpdate(
    IdentityCustomer,
    { id: row.customerId },
    { kyc_status: 'pending', kyc_failure_reason: null, bvn_last4: row.bvnLast4, updated_at: raw('now()') },
  );
}

/**
 * Ends a pending verification with its outcome (`abandoned`: the provider never answered), erases
 * its sealed BVN and sets the customer's kyc_status to match; null if it had already ended.
 */
export async function completeVerification(
  em: EntityManager,
  verificationId: string,
  outcome: BvnOutcome | 'abandoned',
): Promise<{ verification: BvnVerificationRow; customer: CustomerRow } | null> {
  const status: BvnVerificationStatus =
    outcome === 'verified' || outcome === 'abandoned' ? outcome : 'verification_failed';
  const failureReason = status === 'verification_failed' ? (outcome as BvnFailureReason) : null;
  const ended = await em.nativeUpdate(
    BvnVerification,
    { id: verificationId, status: 'pending' },
    { status, failure_reason: failureReason, bvn_ciphertext: null, completed_at: raw('now()') },
  );
  if (ended === 0) return null;
  const verification = await em.findOneOrFail(BvnVerification, { id: verificationId }, { refresh: true });
  // An abandoned lookup leaves the customer as unverified as before it was asked for.
  await em.nativeUpdate(
    IdentityCustomer,
    { id: verification.customer_id },
    {
      kyc_status: status === 'abandoned' ? 'unverified' : status,
      kyc_failure_reason: failureReason,
      updated_at: raw('now()'),
    },
  );
  const customer = await em.findOneOrFail(IdentityCustomer, { id: verification.customer_id }, { refresh: true });
  return { verification, customer };
}
