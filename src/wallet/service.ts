// A tenant mode's NGN wallet: as the API and the operator CLI show it, and funded by an operator
// from the platform's external funding account (a balanced journal entry, once per reference).
import type { EntityManager } from '@mikro-orm/postgresql';
import { postMovement, walletBalance } from '../ledger/ledger.ts';
import { walletFunding } from '../ledger/movements.ts';

export async function walletView(em: EntityManager, tenantId: string) {
  const balance = await walletBalance(em, tenantId);
  return {
    currency: balance.currency,
    available_minor: balance.availableMinor,
    pending_minor: balance.pendingMinor,
    updated_at: balance.updatedAt.toISOString(),
  };
}

export function fundWallet(em: EntityManager, tenantId: string, amountMinor: number, reference: string) {
  return postMovement(em, tenantId, walletFunding({ tenantId, reference, amountMinor }));
}
