// Virtual accounts: provider routing (which providers, in which order), creation and closure
// through their workflows, reads, and sandbox credits. Temporary accounts expire through a durable
// timer workflow that the create workflow starts. (Operators freeze and unfreeze with the CLI.) A
// BVN sent with a create is kept as BVN verification keeps one (src/identity/bvn.ts): its keyed
// hash and last 4, and a sealed copy for the allocation, erased once it is of no more use; the
// workflow is told only that there is one.
import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import { ActivityFailure, ApplicationFailure, type Client, WorkflowFailedError } from '@temporalio/client';
import { type BvnKeys, bvnHash, bvnLast4, sealBvn } from '../identity/bvn.ts';
import { ApiError } from '../http/errors.ts';
import { executeOnce } from '../runtime/workflow-runs.ts';
import { sha256 } from '../lib/canonical.ts';
import { type Window, paginationView } from '../http/pagination.ts';
import type { Providers, VirtualAccountProviderEntry } from '../connectors/registry.ts';
import { ProviderError } from '../connectors/capabilities.ts';
import type { ResolvedKey } from '../tenants/tenants.ts';
import {
  CLOSE_WORKFLOW_TYPE,
  CREATE_WORKFLOW_TYPE,
  type VirtualAccountCloseInput,
  type VirtualAccountCreateInput,
  closeWorkflowId,
  createWorkflowId,
} from '../../workflows/virtual-accounts/definitions.ts';
import type {
  virtualAccountCloseWorkflow,
  virtualAccountCreateWorkflow,
} from '../../workflows/virtual-accounts/virtual-accounts.ts';
import { inboundCreditView, virtualAccountView } from './views.ts';
import type {
  CreateVirtualAccountBody,
  ReturnCreditBody,
  ReturnedCreditView,
  SandboxCreditBody,
  VirtualAccountView,
} from './schemas.ts';
import {
  type InboundCreditRow,
  type VirtualAccountRow,
  eraseSealedBvn,
  eraseStaleSealedBvns,
  findAccount,
  findAccountCredit,
  findByRequestId,
  insertSealedBvn,
  listAccountCredits,
  listAccounts,
  sealedBvnBinding,
} from './store.ts';
import { returnableMinor } from './domain.ts';
import { type TransferService, returnedOfCredits } from '../transfers/service.ts';
import { MIN_TRANSFER_MINOR } from '../transfers/domain.ts';
import { isUuid } from '../http/ids.ts';

export const TEMPORARY_ACCOUNT_TTL_MS = 24 * 60 * 60 * 1000;

export interface VirtualAccountServiceDeps {
  orm: MikroORM;
  client: Client;
  taskQueue: string;
  providers: Providers;
  /** The keys a BVN sent with a create is hashed and sealed under. */
  bvnKeys: BvnKeys;
  /** What a credit's return is made through: the transfers' own create (decisions §21). */
  transfers: TransferService;
}

export class VirtualAccountService {
  private readonly deps: VirtualAccountServiceDeps;

  constructor(deps: VirtualAccountServiceDeps) {
    this.deps = deps;
  }

  /** Providers that may serve this request, best first. */
  private candidates(tenant: ResolvedKey, body: CreateVirtualAccountBody): VirtualAccountProviderEntry[] {
    const country = body.country ?? 'NG';
    const currency = body.currency ?? 'NGN';
    const requested = body.provider ?? 'auto';
    const all = this.deps.providers.virtualAccounts;
    if (requested !== 'auto' && !all.some((entry) => entry.provider.name === requested)) {
      throw ApiError.validation([
        { path: 'provider', message: `must be auto or one of ${all.map((entry) => entry.provider.name).join(', ')}` },
      ]);
    }
    const eligible = all.filter(
      (entry) =>
        (requested === 'auto' || entry.provider.name === requested) &&
        entry.modes.includes(tenant.mode) &&
        entry.countries.includes(country) &&
        entry.currencies.includes(currency),
    );
    // A bank hint goes to the providers that can honour it first.
    return body.preferred_bank
      ? [...eligible].sort((a, b) => Number(b.supportsPreferredBank) - Number(a.supportsPreferredBank))
      : eligible;
  }

  /** The fingerprint of a BVN that idempotency records may keep (never the BVN). */
  bvnFingerprint(bvn: string): string {
    return bvnHash(this.deps.bvnKeys, bvn);
  }

  /**
   * Creates the account through its create workflow (provider failover, allocation, row, event,
   * expiry timer) and answers from the row. Replay-safe on request_id and the Idempotency-Key.
   */
  async create(
    tenant: ResolvedKey,
    body: CreateVirtualAccountBody,
    idempotencyKey?: string,
  ): Promise<{ status: 200 | 201; body: VirtualAccountView }> {
    const accountType = body.account_type ?? 'standard';
    if (!tenant.allowedAccountTypes.includes(accountType)) {
      throw ApiError.validation([
        { path: 'account_type', message: `must be one of ${tenant.allowedAccountTypes.join(', ')} for this tenant` },
      ]);
    }
    if (body.request_id) {
      const existing = await findByRequestId(this.deps.orm.em.fork(), tenant.tenantId, body.request_id);
      if (existing) return { status: 200, body: virtualAccountView(existing) };
    }
    const candidates = this.candidates(tenant, body);
    const id = randomUUID();
    const input: VirtualAccountCreateInput = {
      accountId: id,
      tenantId: tenant.tenantId,
      customerId: body.customer_id,
      accountName: body.account_name,
      ...(body.bvn ? { sealedBvn: true } : {}),
      ...(body.preferred_bank ? { preferredBank: body.preferred_bank } : {}),
      providers: candidates.map((entry) => ({ name: entry.provider.name, preferredBank: entry.supportsPreferredBank })),
      reference: body.request_id ? `va:${tenant.tenantId}:${body.request_id}` : `va:${id}`,
      accountType,
      metadata: body.metadata ?? null,
      requestId: body.request_id ?? null,
      expiresAt: accountType === 'temporary' ? new Date(Date.now() + TEMPORARY_ACCOUNT_TTL_MS).toISOString() : null,
      market: `${body.country ?? 'NG'}/${body.currency ?? 'NGN'}`,
    };
    // Keyed by request_id, else the Idempotency-Key: a retry (even after a 503) meets the same run.
    const key = body.request_id
      ? `request:${sha256(body.request_id)}`
      : idempotencyKey
        ? `key:${sha256(idempotencyKey)}`
        : `new:${id}`;
    const workflowId = createWorkflowId(tenant.tenantId, key);
    if (body.bvn) await this.sealBvn(tenant.tenantId, id, body.bvn);
    const result = await executeOnce<typeof virtualAccountCreateWorkflow>(this.deps.client, CREATE_WORKFLOW_TYPE, {
      workflowId,
      taskQueue: this.deps.taskQueue,
      args: [input],
    }).then(
      async (ended) => {
        // A repeat joins the run of the first request: this request's copy is never read.
        if (body.bvn) await this.forgetBvn(id);
        return ended;
      },
      async (error: unknown) => {
        // The run ended without an account (it erased the copy itself; so does this, should the
        // run be another request's). Any other error leaves the copy to the run, if one started.
        if (body.bvn && error instanceof WorkflowFailedError) await this.forgetBvn(id);
        throw createRefusal(error);
      },
    );
    const row = await this.row(tenant.tenantId, result.accountId);
    return { status: result.created ? 201 : 200, body: virtualAccountView(row) };
  }

  /**
   * Keeps the BVN for the create's allocation: keyed hash, last 4 and a copy sealed to the account
   * id. Copies that their creates left behind (a workflow that never started) are erased here too.
   */
  private async sealBvn(tenantId: string, accountId: string, bvn: string): Promise<void> {
    const keys = this.deps.bvnKeys;
    await this.deps.orm.em.fork().transactional(async (tx) => {
      await eraseStaleSealedBvns(tx);
      await insertSealedBvn(tx, {
        accountId,
        tenantId,
        bvnHash: bvnHash(keys, bvn),
        bvnLast4: bvnLast4(bvn),
        sealedBvn: sealBvn(keys, sealedBvnBinding(accountId), bvn),
      });
    });
  }

  /**
   * Erases this request's sealed copy once its run has answered. Best effort: the answer stands
   * if the database refuses now, and the next create's sweep erases the copy within the hour.
   */
  private async forgetBvn(accountId: string): Promise<void> {
    await eraseSealedBvn(this.deps.orm.em.fork(), accountId).catch(() => undefined);
  }

  async get(tenantId: string, id: string) {
    return virtualAccountView(await this.row(tenantId, id));
  }

  /** The account's inbound credits (applied, held, returned), newest first; 404 for another tenant's account. */
  async credits(tenantId: string, id: string, window: Window) {
    const account = await this.row(tenantId, id);
    const em = this.deps.orm.em.fork();
    const { rows, total } = await listAccountCredits(em, account.id, window);
    const returned = await returnedOfCredits(
      em,
      rows.map((row) => row.id),
    );
    return {
      items: rows.map((row) => inboundCreditView(row, returned.get(row.id)?.returnedMinor ?? 0)),
      pagination: paginationView(window, total),
    };
  }

  /**
   * Sends a credit (all that is left of it, or `amount_minor`) back to its sender's account as an
   * ordinary transfer from the wallet, linked to it (decisions §21): fee, limit and the tenant's
   * transfer policy as for any transfer. 422 FAILED_PRECONDITION for a credit without its sender's
   * account, a held one (operators decide those), or more than is left (`details.returnable_minor`;
   * the transfer's reservation decides it for good, so two returns at once cannot both pass).
   */
  async returnCredit(
    key: ResolvedKey,
    accountId: string,
    creditId: string,
    body: ReturnCreditBody,
    idempotencyKey?: string,
  ): Promise<{ status: 200 | 201; body: ReturnedCreditView }> {
    const account = await this.row(key.tenantId, accountId);
    const credit = await this.credit(account.id, creditId);
    const em = this.deps.orm.em.fork();
    const returned = (await returnedOfCredits(em, [credit.id])).get(credit.id)?.returnedMinor ?? 0;
    const left = returnableMinor({
      amountMinor: credit.amount_minor,
      feeMinor: credit.fee_minor,
      returnedMinor: returned,
    });
    if (credit.status === 'held') {
      throw new ApiError(
        'failed_precondition',
        'the credit reached a closed or expired account and is held in suspense: operators return or release it',
        { returnable_minor: 0 },
      );
    }
    if (!credit.sender_account_number || !credit.sender_bank_code) {
      throw new ApiError(
        'failed_precondition',
        "the credit does not carry its sender's account and bank: there is no account to return it to",
      );
    }
    const amountMinor = body?.amount_minor ?? left;
    if (amountMinor > left || amountMinor < MIN_TRANSFER_MINOR) {
      throw new ApiError(
        'failed_precondition',
        left < MIN_TRANSFER_MINOR
          ? `${left} kobo is left of the credit to return, below the smallest transfer (${MIN_TRANSFER_MINOR} kobo)`
          : `at most ${left} kobo of the credit is left to return`,
        { returnable_minor: left },
      );
    }
    const created = await this.deps.transfers
      .create(
        key.tenantId,
        {
          amount_minor: amountMinor,
          recipient_account: credit.sender_account_number,
          recipient_bank_code: credit.sender_bank_code,
          narration: body?.reason ?? `Return of ${credit.transaction_reference}`.slice(0, 100),
        },
        idempotencyKey,
        key.mode,
        key.keyId,
        { returnOf: { creditId: credit.id, fundedFrom: 'wallet' } },
      )
      .catch((error: unknown) => {
        // The sender's bank code is the credit's, not a field of this request: a bank the gateway
        // cannot pay is a precondition of the credit, not bad input.
        if (error instanceof ApiError && error.kind === 'validation_error') {
          throw new ApiError(
            'failed_precondition',
            `the sender's bank ${credit.sender_bank_code} is not one the gateway pays`,
            null,
            {
              cause: error,
            },
          );
        }
        throw error;
      });
    const after = await this.credit(account.id, creditId);
    const nowReturned = (await returnedOfCredits(em, [after.id])).get(after.id)?.returnedMinor ?? 0;
    return {
      status: created.status,
      body: { credit: inboundCreditView(after, nowReturned), transfer: created.body.data },
    };
  }

  /** One of the account's credits; 404 for none (a refused credit is no account's). */
  private async credit(accountId: string, creditId: string): Promise<InboundCreditRow> {
    const row = isUuid(creditId) ? await findAccountCredit(this.deps.orm.em.fork(), accountId, creditId) : null;
    if (!row) throw ApiError.notFound(`credit ${creditId}`);
    return row;
  }

  private async row(tenantId: string, id: string): Promise<VirtualAccountRow> {
    const row = isUuid(id) ? await findAccount(this.deps.orm.em.fork(), id, { tenantId }) : null;
    if (!row) throw ApiError.notFound(`virtual account ${id}`);
    return row;
  }

  async list(
    tenantId: string,
    query: { customer_id?: string; status?: string; account_type?: string; bank_code?: string; sort: string },
    window: Window,
  ) {
    // A bank code or a bank slug.
    const bankCode =
      query.bank_code === undefined
        ? undefined
        : ((await this.deps.providers.banks.list().catch(() => [])).find((bank) => bank.slug === query.bank_code)
            ?.code ?? query.bank_code);
    const { bank_code: _slugOrCode, sort, ...filters } = query;
    const { rows, total } = await listAccounts(
      this.deps.orm.em.fork(),
      tenantId,
      { ...filters, ...(bankCode === undefined ? {} : { bank_code: bankCode }) },
      sort,
      window,
    );
    return { items: rows.map(virtualAccountView), pagination: paginationView(window, total) };
  }

  async close(tenantId: string, id: string, reason: string | undefined) {
    const current = await this.row(tenantId, id);
    if (current.status !== 'active' && current.status !== 'frozen') {
      throw new ApiError('failed_precondition', `a ${current.status} account cannot be closed`);
    }
    const input: VirtualAccountCloseInput = {
      accountId: current.id,
      tenantId,
      provider: current.provider,
      accountNumber: current.account_number,
      reason: reason ?? null,
    };
    const workflowId = closeWorkflowId(current.id);
    const result = await executeOnce<typeof virtualAccountCloseWorkflow>(this.deps.client, CLOSE_WORKFLOW_TYPE, {
      workflowId,
      taskQueue: this.deps.taskQueue,
      args: [input],
    }).catch((error: unknown) => {
      if (!(error instanceof WorkflowFailedError)) throw error;
      throw new ApiError('unavailable', 'the provider could not close the account right now; retry', null, {
        cause: error,
      });
    });
    if (!result.closed) {
      throw new ApiError('failed_precondition', 'the account changed state while closing; it cannot be closed');
    }
    return virtualAccountView(await this.row(tenantId, id));
  }

  /** Sandbox keys: have the sandbox bank send an inbound credit, through the real callback path. */
  async sandboxCredit(tenant: ResolvedKey, id: string, body: SandboxCreditBody) {
    if (tenant.mode !== 'test') throw new ApiError('forbidden', 'sandbox credits need a sandbox (sk_test_) key');
    const account = await this.row(tenant.tenantId, id);
    const provider = this.deps.providers.virtualAccounts.find(
      (entry) => entry.provider.name === account.provider,
    )?.provider;
    if (!provider?.simulateInboundCredit)
      throw new ApiError('failed_precondition', `provider ${account.provider} cannot simulate credits`);
    try {
      const sent = await provider.simulateInboundCredit(account.account_number, {
        amountMinor: body.amount_minor,
        ...(body.sender_name ? { senderName: body.sender_name } : {}),
        ...(body.reference ? { reference: body.reference } : {}),
        ...(body.sender_account_number && body.sender_bank_code
          ? { senderAccountNumber: body.sender_account_number, senderBankCode: body.sender_bank_code }
          : {}),
      });
      return {
        virtual_account_id: id,
        amount_minor: body.amount_minor,
        reference: body.reference ?? null,
        transaction_reference: sent.transactionReference,
        status: 'sent' as const,
      };
    } catch (error) {
      if (error instanceof ProviderError && error.outcome === 'rejected') {
        throw new ApiError(
          'conflict',
          `reference ${body.reference ?? ''} was already used for a credit of another amount to this account`,
        );
      }
      throw new ApiError('unavailable', 'the sandbox bank could not send the credit right now', null, { cause: error });
    }
  }
}

/**
 * A create workflow that failed: no provider (422), a provider's refusal (422), a BVN no longer
 * held (422: a run that began after its copy's time was up), or unavailable.
 */
function createRefusal(error: unknown): ApiError {
  const cause = error instanceof WorkflowFailedError ? error.cause : undefined;
  const failure = cause instanceof ActivityFailure ? cause.cause : cause;
  if (
    failure instanceof ApplicationFailure &&
    (failure.type === 'no_provider' || failure.type === 'provider_refused' || failure.type === 'bvn_erased')
  ) {
    return new ApiError('failed_precondition', failure.message, null, { cause: error });
  }
  return new ApiError('unavailable', 'the virtual account could not be created right now; retry', null, {
    cause: error,
  });
}

// What other features read of virtual accounts (reconciliation): this feature's store stays its own.
export {
  type CreditWithTenant,
  creditsByReferenceOrSession,
  creditsReceivedBetween,
  tenantsOfAccounts,
} from './store.ts';

// What a credit's return reads of it (activities/transfers: its reservation decides on the locked row).
export { lockCredit as lockCreditForReturn } from './store.ts';
