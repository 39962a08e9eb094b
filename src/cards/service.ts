// Cards: issuing through the card processor, reads, and handing lock / unlock / fund to the card's
// workflow (Signal-with-Start: the workflow exists from the first operation on, and a signal has
// no in-flight limit, so a busy card takes any number of concurrent requests). Operations are
// recorded before they are sent, keyed by the client's idempotency key, so a repeat finds the same
// operation and the workflow (which remembers operation ids) applies it once.
import { Filter, pageOf } from '../db/sql-pages.ts';
import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { cardAccountCode } from '../ledger/ledger.ts';
import type { MikroORM } from '@mikro-orm/postgresql';
import { type Client, WorkflowFailedError } from '@temporalio/client';
import { ApiError } from '../http/errors.ts';
import { executeOnce } from '../workflow-runs.ts';
import { sha256 } from '../http/idempotency.ts';
import { type Window, paginationView } from '../http/pagination.ts';
import type { Providers } from '../providers/registry.ts';
import type { ResolvedKey } from '../tenants/tenants.ts';
import {
  CARD_ISSUE_WORKFLOW_TYPE,
  CARD_WORKFLOW_TYPE,
  type CardIssueInput,
  cardIssueWorkflowId,
  type CardOperation,
  type CardWorkflowInput,
  cardWorkflowId,
  operationRequestedSignal,
} from '../../workflows/card-definitions.ts';
import type { cardIssueWorkflow, cardWorkflow } from '../../workflows/card.ts';
import { type CardRow, type FundingRow, cardView, fundingView } from './views.ts';
import { isUuid } from '../http/ids.ts';

export interface CardServiceDeps {
  orm: MikroORM;
  client: Client;
  taskQueue: string;
  providers: Providers;
  /** Continue-as-new threshold handed to new card workflows (tests make it small). */
  continueAsNewAfter?: number;
}

export class CardService {
  private readonly deps: CardServiceDeps;

  constructor(deps: CardServiceDeps) {
    this.deps = deps;
  }

  /**
   * Issues a card through its issue workflow (processor, then row, ledger account and event) and
   * answers from the row. Keyed by the Idempotency-Key when there is one: a retry, even after a
   * 503, meets the same run and the same card, and the processor issues once.
   */
  async create(
    tenant: ResolvedKey,
    body: { customer_id: string; currency?: string | undefined; metadata?: Record<string, unknown> | undefined },
    idempotencyKey?: string,
  ) {
    const input: CardIssueInput = {
      cardId: randomUUID(),
      tenantId: tenant.tenantId,
      customerId: body.customer_id,
      currency: body.currency ?? 'NGN',
      metadata: body.metadata ?? null,
    };
    const workflowId = cardIssueWorkflowId(
      tenant.tenantId,
      idempotencyKey ? `key:${sha256(idempotencyKey)}` : `new:${input.cardId}`,
    );
    const { cardId } = await executeOnce<typeof cardIssueWorkflow>(this.deps.client, CARD_ISSUE_WORKFLOW_TYPE, {
      workflowId,
      taskQueue: this.deps.taskQueue,
      args: [input],
    }).catch((error: unknown) => {
      if (!(error instanceof WorkflowFailedError)) throw error;
      throw new ApiError('unavailable', 'the card processor is unavailable right now; retry', null, { cause: error });
    });
    return cardView(await this.row(tenant.tenantId, cardId));
  }

  private async row(tenantId: string, cardId: string): Promise<CardRow> {
    const [row] = isUuid(cardId)
      ? await this.deps.orm.em
          .fork()
          .execute<CardRow[]>('select * from cards where id = ? and tenant_id = ?', [cardId, tenantId])
      : [];
    if (!row) throw ApiError.notFound(`card ${cardId}`);
    return row;
  }

  async get(tenantId: string, cardId: string) {
    return cardView(await this.row(tenantId, cardId));
  }

  async list(
    tenantId: string,
    filters: { customer_id?: string | undefined; status?: string | undefined },
    window: Window,
  ) {
    const filter = new Filter('tenant_id = ?', tenantId)
      .equals('customer_id', filters.customer_id)
      .equals('status', filters.status);
    const { rows, total } = await pageOf<CardRow>(this.deps.orm.em.fork(), {
      from: 'cards',
      filter,
      orderBy: 'created_at desc, id desc',
      window,
    });
    return { items: rows.map(cardView), pagination: paginationView(window, total) };
  }

  private async send(card: CardRow, operation: CardOperation): Promise<void> {
    const input: CardWorkflowInput = {
      cardId: card.id,
      tenantId: card.tenant_id,
      locked: card.status === 'locked',
      ...(this.deps.continueAsNewAfter ? { continueAsNewAfter: this.deps.continueAsNewAfter } : {}),
    };
    // The operation is already recorded in PostgreSQL; the signal hands it to the card's workflow
    // (started by the first one), which applies operations in the order it received them.
    await this.deps.client.workflow.signalWithStart<typeof cardWorkflow, [CardOperation]>(CARD_WORKFLOW_TYPE, {
      workflowId: cardWorkflowId(card.id),
      taskQueue: this.deps.taskQueue,
      args: [input],
      signal: operationRequestedSignal,
      signalArgs: [operation],
    });
  }

  /** Lock or unlock: 202 with the operation id once the card's workflow has accepted it. */
  async setLocked(
    tenantId: string,
    cardId: string,
    action: 'lock' | 'unlock',
    options: { idempotencyKey?: string | undefined; reason?: string | undefined },
  ) {
    const card = await this.row(tenantId, cardId);
    const em = this.deps.orm.em.fork();
    const [inserted] = await em.execute<{ id: string }[]>(
      `insert into card_operations (id, card_id, action, status, idempotency_key, reason) values (?, ?, ?, 'accepted', ?, ?)
       on conflict on constraint card_operations_key do nothing returning id`,
      [randomUUID(), card.id, action, options.idempotencyKey ?? null, options.reason ?? null],
    );
    const operationId =
      inserted?.id ??
      (
        await em.execute<{ id: string }[]>(
          'select id from card_operations where card_id = ? and action = ? and idempotency_key = ?',
          [card.id, action, options.idempotencyKey ?? null],
        )
      )[0]!.id;
    await this.send(card, { kind: action, operationId });
    return { card_id: card.id, operation_id: operationId, action, status: 'accepted' as const };
  }

  async fund(
    tenantId: string,
    cardId: string,
    body: {
      amount_minor: number;
      currency?: string | undefined;
      transaction_reference?: string | undefined;
      idempotency_key?: string | undefined;
    },
  ) {
    const card = await this.row(tenantId, cardId);
    const currency = body.currency ?? 'NGN';
    if (currency !== card.currency)
      throw ApiError.validation([{ path: 'currency', message: `must be ${card.currency}, the card's currency` }]);
    const find = async () => {
      if (!body.idempotency_key && !body.transaction_reference) return undefined;
      const [row] = await this.deps.orm.em
        .fork()
        .execute<FundingRow[]>(
          'select * from card_fundings where card_id = ? and (idempotency_key = ? or transaction_reference = ?)',
          [card.id, body.idempotency_key ?? null, body.transaction_reference ?? null],
        );
      return row;
    };
    let funding = await find();
    if (!funding) {
      try {
        funding = await this.deps.orm.em.fork().transactional(async (tx) => {
          const operationId = randomUUID();
          await tx.execute(
            `insert into card_operations (id, card_id, action, status, idempotency_key) values (?, ?, 'fund', 'accepted', ?)`,
            // Keys and references are two namespaces: a key never meets a reference of the same text.
            [
              operationId,
              card.id,
              body.idempotency_key !== undefined
                ? `key:${body.idempotency_key}`
                : body.transaction_reference !== undefined
                  ? `reference:${body.transaction_reference}`
                  : null,
            ],
          );
          const [row] = await tx.execute<FundingRow[]>(
            `insert into card_fundings (id, card_id, operation_id, amount_minor, currency, status, transaction_reference, idempotency_key)
             values (?, ?, ?, ?, ?, 'pending', ?, ?) returning *`,
            [
              randomUUID(),
              card.id,
              operationId,
              body.amount_minor,
              currency,
              body.transaction_reference ?? null,
              body.idempotency_key ?? null,
            ],
          );
          return row!;
        });
      } catch (error) {
        // A concurrent request with the same key or reference won: use its funding.
        if (!(error instanceof UniqueConstraintViolationException)) throw error;
        funding = await find();
        if (!funding) throw error;
      }
    }
    await this.send(card, {
      kind: 'fund',
      operationId: funding.operation_id,
      fundingId: funding.id,
      amountMinor: Number(funding.amount_minor),
    });
    return {
      card_id: card.id,
      operation_id: funding.operation_id,
      action: 'fund' as const,
      status: 'accepted' as const,
      funding_id: funding.id,
    };
  }

  async balance(tenantId: string, cardId: string) {
    const card = await this.row(tenantId, cardId);
    const [account] = await this.deps.orm.em
      .fork()
      .execute<{ balance_minor: string; updated_at: Date }[]>(
        'select balance_minor, updated_at from ledger_accounts where tenant_id = ? and code = ? and currency = ?',
        [tenantId, cardAccountCode(card.id), card.currency],
      );
    return {
      card_id: card.id,
      currency: card.currency,
      available_minor: Number(account?.balance_minor ?? 0),
      updated_at: new Date(account?.updated_at ?? card.updated_at).toISOString(),
    };
  }

  async history(tenantId: string, cardId: string) {
    const card = await this.row(tenantId, cardId);
    const rows = await this.deps.orm.em
      .fork()
      .execute<FundingRow[]>('select * from card_fundings where card_id = ? order by created_at desc, id desc', [
        card.id,
      ]);
    return { items: rows.map(fundingView) };
  }
}
