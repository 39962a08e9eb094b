// Virtual-account workflows: a temporary account's expiry as a durable timer (not a cron scan),
// and one workflow per inbound credit (id `credit:<provider>:<transaction reference>`), so a
// credit the bank sends again, or concurrently, is applied once. Both answer a `status` query.
import { proxyActivities, setHandler, sleep } from '@temporalio/workflow';
import type { VirtualAccountActivities } from '../activities/virtual-accounts.ts';
import {
  type ExpiryState,
  type InboundCredit,
  type InboundCreditState,
  expiryStatusQuery,
  inboundCreditStatusQuery,
} from './virtual-accounts-definitions.ts';

const { expireVirtualAccount, applyInboundCredit } = proxyActivities<VirtualAccountActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '1 minute' },
});

export async function virtualAccountExpiryWorkflow(input: { accountId: string; expiresAt: string }): Promise<string> {
  const state: ExpiryState = { ...input, status: 'waiting' };
  setHandler(expiryStatusQuery, () => state);
  const wait = Date.parse(input.expiresAt) - Date.now();
  if (wait > 0) await sleep(wait);
  state.status = await expireVirtualAccount({ accountId: input.accountId });
  return state.status;
}

export async function inboundCreditWorkflow(credit: InboundCredit): Promise<{ status: string; reason?: string }> {
  const state: InboundCreditState = { transactionReference: credit.transactionReference, status: 'applying' };
  setHandler(inboundCreditStatusQuery, () => state);
  const result = await applyInboundCredit(credit);
  Object.assign(state, result);
  return result;
}
