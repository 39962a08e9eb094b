// Virtual-account workflows: a temporary account's expiry as a durable timer (not a cron scan),
// and one workflow per inbound credit (id `credit:<provider>:<transaction reference>`), so a
// credit the bank sends again, or concurrently, is applied once. Both answer a `status` query.
import { ActivityFailure, ApplicationFailure, proxyActivities, setHandler, sleep } from '@temporalio/workflow';
import type { VirtualAccountActivities } from './definitions.ts';
import { UNTIL_RECORDED, WHILE_THE_API_WAITS } from '../activity-options.ts';
import { heldCreditReturnReference } from '../../src/virtual-accounts/domain.ts';
import {
  type ExpiryState,
  type VirtualAccountCloseInput,
  type VirtualAccountCloseState,
  closeStatusQuery,
  type VirtualAccountCreateInput,
  type VirtualAccountCreateState,
  createStatusQuery,
  type HeldCreditReturn,
  type HeldCreditReturnResult,
  type InboundCredit,
  type InboundCreditState,
  expiryStatusQuery,
  inboundCreditStatusQuery,
} from './definitions.ts';

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

// A held credit's return makes a transfer through the transfers' create (its name enquiry and
// reservation): longer than a database write, and retried while the bank or database is down.
const { returnHeldCredit } = proxyActivities<VirtualAccountActivities>({
  startToCloseTimeout: '1 minute',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '5 minutes' },
});

/**
 * Applies a credit once. One to a closed or expired account is held in suspense (decisions §21)
 * and, when its sender's account is known, sent straight back, in full and without a fee. (No
 * patch: a run recorded before returns never had its credit held, so its history gains no command.)
 */
export async function inboundCreditWorkflow(credit: InboundCredit): Promise<{ status: string; reason?: string }> {
  const state: InboundCreditState = { transactionReference: credit.transactionReference, status: 'applying' };
  setHandler(inboundCreditStatusQuery, () => state);
  const { status, reason, creditId, returnTo } = await applyInboundCredit(credit);
  Object.assign(state, { status, ...(reason !== undefined ? { reason } : {}) });
  if (status === 'held' && creditId !== undefined && returnTo !== undefined) {
    state.status = 'returning';
    const returned = await returnHeldCredit({
      creditId,
      accountNumber: returnTo.accountNumber,
      bankCode: returnTo.bankCode,
      reference: heldCreditReturnReference(creditId, 'auto'),
    });
    if (returned.status === 'returning') {
      // Why it was held is past: it went back.
      delete state.reason;
      Object.assign(state, { status: 'returned', transferId: returned.transferId });
    } else {
      Object.assign(state, { status: 'held', reason: returned.reason });
    }
  }
  return { status: state.status, ...(state.reason !== undefined ? { reason: state.reason } : {}) };
}

/**
 * An operator's return of a held credit to the account they name (`admin credits return`): one
 * durable step, made once under its reference, answered to the operator's command.
 */
export async function heldCreditReturnWorkflow(input: HeldCreditReturn): Promise<HeldCreditReturnResult> {
  return returnHeldCredit(input);
}

type AllocatedAccount = Awaited<ReturnType<VirtualAccountActivities['allocateVirtualAccount']>>;

// Allocation runs while the API request waits: one attempt per provider, and the next provider
// when one is unavailable. Recording waits out the database: the account exists at the provider.
const { allocateVirtualAccount } = proxyActivities<VirtualAccountActivities>({
  startToCloseTimeout: '8s',
  retry: { maximumAttempts: 1 },
});
const { recordVirtualAccount, releaseVirtualAccount, startExpiry, recordClosure, eraseVirtualAccountBvn } =
  proxyActivities<VirtualAccountActivities>(UNTIL_RECORDED);

/**
 * Creates a virtual account: allocation at the first provider that can serve (failing over past
 * unavailable ones), the row and `virtual_account.created`, and for a temporary account its expiry
 * timer. An allocation that turns out not to be needed (another request won the request_id) is
 * given back to the provider. A BVN is not in the input: the allocation opens the sealed copy kept
 * under the account id, and recording the account (or, when none is created, the erase before the
 * run fails) erases that copy.
 */
export async function virtualAccountCreateWorkflow(
  input: VirtualAccountCreateInput,
): Promise<{ accountId: string; created: boolean }> {
  const state: VirtualAccountCreateState = { accountId: input.accountId, status: 'allocating' };
  setHandler(createStatusQuery, () => state);
  let chosen: { provider: string; allocated: AllocatedAccount } | undefined;
  let refusal: ApplicationFailure | undefined;
  for (const candidate of input.providers) {
    state.provider = candidate.name;
    try {
      const allocated = await allocateVirtualAccount({
        provider: candidate.name,
        reference: input.reference,
        accountName: input.accountName,
        customerId: input.customerId,
        ...(input.sealedBvn ? { sealedBvnOf: input.accountId } : {}),
        // Only a run started before the BVN was sealed has it here.
        ...(input.bvn ? { bvn: input.bvn } : {}),
        ...(input.preferredBank && candidate.preferredBank ? { preferredBank: input.preferredBank } : {}),
      });
      chosen = { provider: candidate.name, allocated };
      break;
    } catch (error) {
      const cause = error instanceof ActivityFailure ? error.cause : error;
      // A definitive refusal (or a BVN no longer held) ends it; an unavailable provider (or one
      // that did not answer) is skipped.
      if (cause instanceof ApplicationFailure && (cause.type === 'provider_refused' || cause.type === 'bvn_erased')) {
        refusal = cause;
        break;
      }
    }
  }
  if (!chosen) {
    // No account will be recorded: the sealed BVN is of no more use. (Only inputs with a sealed
    // BVN schedule this activity, and runs recorded before it existed have none: no patch needed.)
    if (input.sealedBvn) await eraseVirtualAccountBvn({ accountId: input.accountId });
    throw (
      refusal ??
      ApplicationFailure.create({
        type: 'no_provider',
        message: `no provider can serve ${input.market} accounts right now`,
        nonRetryable: true,
      })
    );
  }
  state.status = 'recording';
  const recorded = await recordVirtualAccount({ ...input, provider: chosen.provider, ...chosen.allocated });
  if (!recorded.created && recorded.accountNumber !== chosen.allocated.accountNumber) {
    await releaseVirtualAccount({ provider: chosen.provider, accountNumber: chosen.allocated.accountNumber });
  }
  if (recorded.created && input.expiresAt) {
    await startExpiry({ accountId: recorded.accountId, expiresAt: input.expiresAt });
  }
  state.accountId = recorded.accountId;
  state.status = recorded.created ? 'created' : 'existing';
  return { accountId: recorded.accountId, created: recorded.created };
}

// Closing at the provider runs while the API request waits: a few quick attempts.
const { closeAtProvider } = proxyActivities<VirtualAccountActivities>(WHILE_THE_API_WAITS);

/**
 * Closes an account: at the provider first (no money can arrive on a closed account), then the
 * row and `virtual_account.closed`, retried until recorded, so an account closed at the provider
 * is never left active in the books.
 */
export async function virtualAccountCloseWorkflow(input: VirtualAccountCloseInput): Promise<{ closed: boolean }> {
  const state: VirtualAccountCloseState = { accountId: input.accountId, status: 'closing' };
  setHandler(closeStatusQuery, () => state);
  await closeAtProvider({ provider: input.provider, accountNumber: input.accountNumber, reason: input.reason });
  state.status = 'recording';
  const { closed } = await recordClosure({
    accountId: input.accountId,
    tenantId: input.tenantId,
    reason: input.reason,
  });
  state.status = closed ? 'closed' : 'unchanged';
  return { closed };
}
