// Virtual accounts: provider routing and allocation, replay-safe creation, reads, closure, and
// the operator's freeze/unfreeze. Temporary accounts expire through a durable timer workflow.
import { Filter, pageOf } from '../db/pages.ts';
import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Client } from '@temporalio/client';
import { recordEvent } from '../events/events.ts';
import { ApiError } from '../http/errors.ts';
import { type Window, paginationView } from '../http/pagination.ts';
import type { Providers, VirtualAccountProviderEntry } from '../providers/registry.ts';
import { type AllocatedVirtualAccount, ProviderError } from '../providers/types.ts';
import type { ResolvedKey } from '../tenants/tenants.ts';
import { EXPIRY_WORKFLOW_TYPE, expiryWorkflowId } from '../../workflows/virtual-accounts-definitions.ts';
import type { virtualAccountExpiryWorkflow } from '../../workflows/virtual-accounts.ts';
import { type VirtualAccountRow, virtualAccountView } from './views.ts';
import { isUuid } from '../http/ids.ts';

export const TEMPORARY_ACCOUNT_TTL_MS = 24 * 60 * 60 * 1000;

export interface CreateVirtualAccountBody {
  customer_id: string;
  account_name: string;
  provider?: string | undefined;
  account_type?: string | undefined;
  metadata?: Record<string, unknown> | undefined;
  bvn?: string | undefined;
  country?: string | undefined;
  currency?: string | undefined;
  request_id?: string | undefined;
  preferred_bank?: string | undefined;
}

export const SORTS: Record<string, string> = {
  created_at: 'created_at asc, id asc',
  '-created_at': 'created_at desc, id desc',
  account_number: 'account_number asc, id asc',
  '-account_number': 'account_number desc, id desc',
  total_received_minor: 'total_received_minor asc, id asc',
  '-total_received_minor': 'total_received_minor desc, id desc',
  // Legacy aliases, still accepted.
  total_credits: 'total_received_minor asc, id asc',
  '-total_credits': 'total_received_minor desc, id desc',
};

export interface VirtualAccountServiceDeps {
  orm: MikroORM;
  client: Client;
  taskQueue: string;
  providers: Providers;
}

export class VirtualAccountService {
  private readonly deps: VirtualAccountServiceDeps;

  constructor(deps: VirtualAccountServiceDeps) {
    this.deps = deps;
  }

  private async byRequestId(tenantId: string, requestId: string): Promise<VirtualAccountRow | undefined> {
    const [row] = await this.deps.orm.em
      .fork()
      .execute<VirtualAccountRow[]>('select * from virtual_accounts where tenant_id = ? and request_id = ?', [
        tenantId,
        requestId,
      ]);
    return row;
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

  async create(tenant: ResolvedKey, body: CreateVirtualAccountBody): Promise<{ status: 200 | 201; body: unknown }> {
    const accountType = body.account_type ?? 'standard';
    if (!tenant.allowedAccountTypes.includes(accountType)) {
      throw ApiError.validation([
        { path: 'account_type', message: `must be one of ${tenant.allowedAccountTypes.join(', ')} for this tenant` },
      ]);
    }
    if (body.request_id) {
      const existing = await this.byRequestId(tenant.tenantId, body.request_id);
      if (existing) return { status: 200, body: virtualAccountView(existing) };
    }
    const candidates = this.candidates(tenant, body);
    const id = randomUUID();
    const reference = body.request_id ? `va:${tenant.tenantId}:${body.request_id}` : `va:${id}`;
    const expiresAt = accountType === 'temporary' ? new Date(Date.now() + TEMPORARY_ACCOUNT_TTL_MS) : null;

    let chosen: { entry: VirtualAccountProviderEntry; allocated: AllocatedVirtualAccount } | undefined;
    for (const entry of candidates) {
      try {
        const allocated = await entry.provider.allocate({
          reference,
          accountName: body.account_name,
          customerId: body.customer_id,
          ...(body.bvn ? { bvn: body.bvn } : {}),
          ...(body.preferred_bank && entry.supportsPreferredBank ? { preferredBank: body.preferred_bank } : {}),
        });
        chosen = { entry, allocated };
        break;
      } catch (error) {
        // An unavailable provider is skipped; the next one may serve.
        if (!(error instanceof ProviderError && error.transient)) throw error;
      }
    }
    if (!chosen) {
      throw new ApiError(
        'failed_precondition',
        `no provider can serve ${body.country ?? 'NG'}/${body.currency ?? 'NGN'} accounts right now`,
      );
    }

    if (expiresAt) {
      // Started before the row exists: the timer then finds the account, or nothing to expire.
      await this.deps.client.workflow.start<typeof virtualAccountExpiryWorkflow>(EXPIRY_WORKFLOW_TYPE, {
        workflowId: expiryWorkflowId(id),
        taskQueue: this.deps.taskQueue,
        args: [{ accountId: id, expiresAt: expiresAt.toISOString() }],
      });
    }
    try {
      const row = await this.deps.orm.em.fork().transactional(async (tx) => {
        const [inserted] = await tx.execute<VirtualAccountRow[]>(
          `insert into virtual_accounts
             (id, tenant_id, customer_id, account_number, account_name, bank_code, bank_name, provider,
              provider_reference, status, account_type, metadata, request_id, expires_at)
           values (?, ?, ?, ?, ?, ?, ?, ?, ?, 'active', ?, ?, ?, ?)
           on conflict on constraint virtual_accounts_request do nothing returning *`,
          [
            id,
            tenant.tenantId,
            body.customer_id,
            chosen.allocated.accountNumber,
            body.account_name,
            chosen.allocated.bankCode,
            chosen.allocated.bankName,
            chosen.entry.provider.name,
            chosen.allocated.providerReference,
            accountType,
            body.metadata ? JSON.stringify(body.metadata) : null,
            body.request_id ?? null,
            expiresAt,
          ],
        );
        if (!inserted) return undefined;
        await recordEvent(tx, {
          tenantId: tenant.tenantId,
          type: 'virtual_account.created',
          sourceKey: `virtual_account:${id}:created`,
          payload: virtualAccountView(inserted),
        });
        return inserted;
      });
      if (row) return { status: 201, body: virtualAccountView(row) };
      // A concurrent request with the same request_id won; the provider gave both the same account.
      const winner = await this.byRequestId(tenant.tenantId, body.request_id ?? '');
      if (winner) return { status: 200, body: virtualAccountView(winner) };
      throw new Error('virtual account vanished after a request_id conflict');
    } catch (error) {
      if (!body.request_id) {
        // Nothing half-created: give the account back to the provider.
        await chosen.entry.provider
          .close(chosen.allocated.accountNumber, 'allocation rolled back')
          .catch(() => undefined);
      }
      throw error;
    }
  }

  async get(tenantId: string, id: string) {
    return virtualAccountView(await this.row(tenantId, id));
  }

  private async row(tenantId: string, id: string): Promise<VirtualAccountRow> {
    const [row] = isUuid(id)
      ? await this.deps.orm.em
          .fork()
          .execute<VirtualAccountRow[]>('select * from virtual_accounts where id = ? and tenant_id = ?', [id, tenantId])
      : [];
    if (!row) throw ApiError.notFound(`virtual account ${id}`);
    return row;
  }

  async list(
    tenantId: string,
    query: { customer_id?: string; status?: string; account_type?: string; bank_code?: string; sort: string },
    window: Window,
  ) {
    const filter = new Filter('tenant_id = ?', tenantId)
      .equals('customer_id', query.customer_id)
      .equals('status', query.status)
      .equals('account_type', query.account_type);
    if (query.bank_code !== undefined) {
      // A bank code or a bank slug.
      const bySlug = (await this.deps.providers.banks.list().catch(() => [])).find(
        (bank) => bank.slug === query.bank_code,
      );
      filter.where('bank_code = ?', bySlug?.code ?? query.bank_code);
    }
    const { rows, total } = await pageOf<VirtualAccountRow>(this.deps.orm.em.fork(), {
      from: 'virtual_accounts',
      filter,
      orderBy: SORTS[query.sort]!,
      window,
    });
    return { items: rows.map(virtualAccountView), pagination: paginationView(window, total) };
  }

  async close(tenantId: string, id: string, reason: string | undefined) {
    const current = await this.row(tenantId, id);
    if (current.status !== 'active' && current.status !== 'frozen') {
      throw new ApiError('failed_precondition', `a ${current.status} account cannot be closed`);
    }
    const provider = this.deps.providers.virtualAccounts.find((entry) => entry.provider.name === current.provider);
    try {
      await provider?.provider.close(current.account_number, reason);
    } catch (cause) {
      throw new ApiError('unavailable', 'the provider could not close the account right now; retry', null, { cause });
    }
    return this.deps.orm.em.fork().transactional(async (tx) => {
      const [row] = await tx.execute<VirtualAccountRow[]>(
        `update virtual_accounts set status = 'closed', closure_reason = ?, closed_at = now(), updated_at = now()
          where id = ? and tenant_id = ? and status in ('active', 'frozen') returning *`,
        [reason ?? null, id, tenantId],
      );
      if (!row)
        throw new ApiError('failed_precondition', 'the account changed state while closing; it cannot be closed');
      await recordEvent(tx, {
        tenantId,
        type: 'virtual_account.closed',
        sourceKey: `virtual_account:${id}:closed`,
        payload: virtualAccountView(row),
      });
      return virtualAccountView(row);
    });
  }

  /** Operators: active ↔ frozen. */
  async setFrozen(id: string, frozen: boolean) {
    const [from, to] = frozen ? ['active', 'frozen'] : ['frozen', 'active'];
    const [row] = isUuid(id)
      ? await this.deps.orm.em
          .fork()
          .execute<VirtualAccountRow[]>(
            'update virtual_accounts set status = ?, updated_at = now() where id = ? and status = ? returning *',
            [to, id, from],
          )
      : [];
    return row ? virtualAccountView(row) : undefined;
  }

  /** Sandbox keys: have the sandbox bank send an inbound credit, through the real callback path. */
  async sandboxCredit(
    tenant: ResolvedKey,
    id: string,
    body: { amount_minor: number; sender_name?: string | undefined; reference?: string | undefined },
  ) {
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
      });
      return {
        virtual_account_id: id,
        amount_minor: body.amount_minor,
        reference: body.reference ?? null,
        transaction_reference: sent.transactionReference,
        status: 'sent',
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
