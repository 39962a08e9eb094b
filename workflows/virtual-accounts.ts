// Virtual-account workflows: a temporary account's expiry as a durable timer (not a cron scan),
// and one workflow per inbound credit (id `credit:<provider>:<transaction reference>`), so a
// credit the bank sends again, or concurrently, is applied once.
import { proxyActivities, sleep } from '@temporalio/workflow';
import type { VirtualAccountActivities } from '../activities/virtual-accounts.ts';

export function expiryWorkflowId(accountId: string): string {
  return `va-expiry:${accountId}`;
}

export function inboundCreditWorkflowId(provider: string, transactionReference: string): string {
  return `credit:${provider}:${transactionReference}`;
}

export interface InboundCredit {
  provider: string;
  accountNumber: string;
  amountMinor: number;
  transactionReference: string;
  senderName: string;
  sessionId: string;
}

const { expireVirtualAccount, applyInboundCredit } = proxyActivities<VirtualAccountActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumInterval: '1 minute' },
});

export async function virtualAccountExpiryWorkflow(input: { accountId: string; expiresAt: string }): Promise<string> {
  const wait = Date.parse(input.expiresAt) - Date.now();
  if (wait > 0) await sleep(wait);
  return expireVirtualAccount({ accountId: input.accountId });
}

export async function inboundCreditWorkflow(credit: InboundCredit): Promise<{ status: string; reason?: string }> {
  return applyInboundCredit(credit);
}
