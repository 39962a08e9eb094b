// Cards: issuing through the card processor, reads, and handing lock / unlock / fund to the card's
// workflow (Signal-with-Start: the workflow exists from the first operation on, and a signal has
// no in-flight limit, so a busy card takes any number of concurrent requests). Operations are
// recorded before they are sent, keyed by the client's idempotency key, so a repeat finds the same
// operation and the workflow (which remembers operation ids) applies it once.
import { randomUUID } from 'node:crypto';
import { UniqueConstraintViolationException } from '@mikro-orm/core';
import { cardBalance, cardHoldAccountCode } from '../ledger/ledger.ts';
import type { Currency } from '../lib/money.ts';
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { type Client, WorkflowFailedError } from '@temporalio/client';
import { ApiError } from '../http/errors.ts';
import { executeOnce } from '../runtime/workflow-runs.ts';
import { sha256 } from '../lib/canonical.ts';
import { type Window, paginationView } from '../http/pagination.ts';
import type { Providers } from '../connectors/registry.ts';
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
} from '../../workflows/cards/definitions.ts';
import type { cardIssueWorkflow, cardWorkflow } from '../../workflows/cards/card.ts';
import { autoReloadView, cardView, fundingView, securitySettingsView } from './views.ts';
import type { AutoReloadSettings, CreateCardBody, FundCardBody, SecuritySettings, UpdateCardBody } from './schemas.ts';
import { recordEvent } from '../events/events.ts';
import {
  type CardRow,
  type FundingRow,
  findCard,
  findFunding,
  fundingsOf,
  insertFunding,
  listCards,
  recordOperation,
  type CardPolicy,
  updateCardPolicy,
} from './store.ts';
import { isUuid } from '../http/ids.ts';
import {
  type AuthorizationDecision,
  type AuthorizationRequest,
  authorizationView,
  findAuthorizations,
  listAuthorizations,
} from './authorizations.ts';
import { type DecisionTiming, decideAuthorization } from './decision.ts';
import type { SandboxPurchaseBody } from './schemas.ts';

/**
 * Hands an operation recorded in PostgreSQL to the card's workflow (Signal-with-Start: the workflow
 * exists from the first operation on, and applies operations in the order it received them).
 */
export async function requestCardOperation(
  deps: Pick<CardServiceDeps, 'client' | 'taskQueue' | 'continueAsNewAfter'>,
  card: Pick<CardRow, 'id' | 'tenant_id' | 'status'>,
  operation: CardOperation,
): Promise<void> {
  const input: CardWorkflowInput = {
    cardId: card.id,
    tenantId: card.tenant_id,
    locked: card.status === 'locked',
    ...(deps.continueAsNewAfter ? { continueAsNewAfter: deps.continueAsNewAfter } : {}),
  };
  await deps.client.workflow.signalWithStart<typeof cardWorkflow, [CardOperation]>(CARD_WORKFLOW_TYPE, {
    workflowId: cardWorkflowId(card.id),
    taskQueue: deps.taskQueue,
    args: [input],
    signal: operationRequestedSignal,
    signalArgs: [operation],
  });
}

export interface CardServiceDeps {
  orm: MikroORM;
  client: Client;
  taskQueue: string;
  providers: Providers;
  /** Continue-as-new threshold handed to new card workflows (tests make it small). */
  continueAsNewAfter?: number;
  /** Where each authorization decision's time went (the API's metrics). */
  observeDecision?: (timing: DecisionTiming) => void;
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
  async create(tenant: ResolvedKey, body: CreateCardBody, idempotencyKey?: string) {
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
    const row = isUuid(cardId) ? await findCard(this.deps.orm.em.fork(), cardId, { tenantId }) : null;
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
    const { rows, total } = await listCards(this.deps.orm.em.fork(), tenantId, filters, window);
    return { items: rows.map(cardView), pagination: paginationView(window, total) };
  }

  private async send(card: CardRow, operation: CardOperation): Promise<void> {
    await requestCardOperation(this.deps, card, operation);
  }

  /** Lock or unlock: 202 with the operation id once the card's workflow has accepted it. */
  async setLocked(
    tenantId: string,
    cardId: string,
    action: 'lock' | 'unlock',
    options: { idempotencyKey?: string | undefined; reason?: string | undefined },
  ) {
    const card = await this.row(tenantId, cardId);
    const operationId = await recordOperation(this.deps.orm.em.fork(), {
      cardId: card.id,
      action,
      idempotencyKey: options.idempotencyKey ?? null,
      reason: options.reason ?? null,
    });
    await this.send(card, { kind: action, operationId });
    return { card_id: card.id, operation_id: operationId, action, status: 'accepted' as const };
  }

  async fund(tenantId: string, cardId: string, body: FundCardBody) {
    const card = await this.row(tenantId, cardId);
    const currency = body.currency ?? 'NGN';
    if (currency !== card.currency)
      throw ApiError.validation([{ path: 'currency', message: `must be ${card.currency}, the card's currency` }]);
    const keys = { idempotencyKey: body.idempotency_key, transactionReference: body.transaction_reference };
    let funding: FundingRow | null = await findFunding(this.deps.orm.em.fork(), card.id, keys);
    if (!funding) {
      try {
        funding = await insertFunding(this.deps.orm.em.fork(), {
          cardId: card.id,
          amountMinor: body.amount_minor,
          currency,
          ...keys,
        });
      } catch (error) {
        // A concurrent request with the same key or reference won: use its funding.
        if (!(error instanceof UniqueConstraintViolationException)) throw error;
        funding = await findFunding(this.deps.orm.em.fork(), card.id, keys);
        if (!funding) throw error;
      }
    }
    await this.send(card, {
      kind: 'fund',
      operationId: funding.operation_id,
      fundingId: funding.id,
      amountMinor: funding.amount_minor,
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
    const em = this.deps.orm.em.fork();
    const currency = card.currency as Currency;
    const account = await cardBalance(em, tenantId, card.id, currency);
    const holds = await cardBalance(em, tenantId, card.id, currency, cardHoldAccountCode(card.id));
    const updated = Math.max((account?.updatedAt ?? card.updated_at).getTime(), holds?.updatedAt.getTime() ?? 0);
    return {
      card_id: card.id,
      currency: card.currency,
      available_minor: account?.balanceMinor ?? 0,
      held_minor: holds?.balanceMinor ?? 0,
      updated_at: new Date(updated).toISOString(),
    };
  }

  /** Replaces part of the card's policy under its row lock; `onChange` runs in the same transaction. */
  private async setPolicy(
    tenantId: string,
    cardId: string,
    policy: CardPolicy,
    onChange?: (tx: EntityManager, before: CardRow, after: CardRow) => Promise<void>,
  ): Promise<CardRow> {
    if (!isUuid(cardId)) throw ApiError.notFound(`card ${cardId}`);
    return this.deps.orm.em.fork().transactional(async (tx) => {
      const updated = await updateCardPolicy(tx, tenantId, cardId, policy);
      if (!updated) throw ApiError.notFound(`card ${cardId}`);
      await onChange?.(tx, updated.before, updated.after);
      return updated.after;
    });
  }

  /** `PATCH /api/v1/cards/{card_id}`: JIT funding on or off. */
  async update(tenantId: string, cardId: string, body: UpdateCardBody) {
    return cardView(await this.setPolicy(tenantId, cardId, { jit_funding: body.jit_funding }));
  }

  async securitySettings(tenantId: string, cardId: string) {
    return securitySettingsView(await this.row(tenantId, cardId));
  }

  /**
   * Replaces the card's security settings whole. `card.security_settings.updated` is recorded, in
   * the same transaction, when they change: a PUT repeated with the same settings records nothing.
   */
  async putSecuritySettings(tenantId: string, cardId: string, settings: SecuritySettings) {
    const card = await this.setPolicy(
      tenantId,
      cardId,
      {
        per_transaction_limit_minor: settings.per_transaction_limit_minor,
        daily_limit_minor: settings.daily_limit_minor,
        channel_pos: settings.channels.pos,
        channel_web: settings.channels.web,
        channel_atm: settings.channels.atm,
        // One entry per code, in a stable order.
        blocked_merchant_categories: [...new Set(settings.blocked_merchant_categories)].sort(),
      },
      async (tx, before, after) => {
        const previous = securitySettingsView(before);
        const current = securitySettingsView(after);
        if (JSON.stringify(previous) === JSON.stringify(current)) return;
        await recordEvent(tx, {
          tenantId,
          type: 'card.security_settings.updated',
          sourceKey: `card:${cardId}:security-settings:${randomUUID()}`,
          payload: { card_id: cardId, security_settings: current, previous },
        });
      },
    );
    return securitySettingsView(card);
  }

  async autoReload(tenantId: string, cardId: string) {
    return autoReloadView(await this.row(tenantId, cardId));
  }

  async putAutoReload(tenantId: string, cardId: string, settings: AutoReloadSettings) {
    const card = await this.setPolicy(tenantId, cardId, {
      auto_reload_enabled: settings.enabled,
      auto_reload_threshold_minor: settings.threshold_minor,
      auto_reload_amount_minor: settings.amount_minor,
    });
    return autoReloadView(card);
  }

  /** The card's fundings, newest first, paginated like every list (decisions §16). */
  async history(tenantId: string, cardId: string, window: Window) {
    const card = await this.row(tenantId, cardId);
    const { rows, total } = await fundingsOf(this.deps.orm.em.fork(), card.id, window);
    return { items: rows.map(fundingView), pagination: paginationView(window, total) };
  }

  /**
   * Decides a processor's authorization request (src/cards/authorizations.ts). An approval that
   * triggered auto-reload hands its funding to the card's workflow after the decision commits,
   * without delaying the answer; if that hand-over fails, the worker's sweep hands it over again.
   */
  async authorize(
    request: AuthorizationRequest,
    onHandOverError: (error: unknown, fundingId: string) => void,
  ): Promise<AuthorizationDecision> {
    const outcome = await decideAuthorization(this.deps.orm, request);
    this.deps.observeDecision?.(outcome.timing);
    const reload = outcome.autoReload;
    if (reload) {
      this.send(reload.card, {
        kind: 'fund',
        operationId: reload.funding.operation_id,
        fundingId: reload.funding.id,
        amountMinor: reload.funding.amount_minor,
      }).catch((error: unknown) => onHandOverError(error, reload.funding.id));
    }
    return outcome.decision;
  }

  async authorizations(tenantId: string, cardId: string, window: Window) {
    const card = await this.row(tenantId, cardId);
    const { rows, total } = await listAuthorizations(this.deps.orm.em.fork(), card.id, window);
    return { items: rows.map(authorizationView), pagination: paginationView(window, total) };
  }

  /** Sandbox keys: the sandbox processor asks the gateway about a purchase on this card, as a real one would. */
  async sandboxPurchase(tenant: ResolvedKey, cardId: string, body: SandboxPurchaseBody) {
    if (tenant.mode !== 'test') throw new ApiError('forbidden', 'sandbox purchases need a sandbox (sk_test_) key');
    const card = await this.row(tenant.tenantId, cardId);
    const processor = this.deps.providers.cards;
    if (!processor.simulatePurchase) {
      throw new ApiError('failed_precondition', `card processor ${processor.name} cannot simulate purchases`);
    }
    try {
      const answer = await processor.simulatePurchase(card.processor_reference, {
        amountMinor: body.amount_minor,
        merchantName: body.merchant_name,
        merchantCategory: body.merchant_category,
        channel: body.channel,
        authorizationId: body.authorization_id,
      });
      return { authorization_id: answer.authorizationId, decision: answer.decision, reason: answer.reason };
    } catch (error) {
      // Authorization ids are per card: an id another card (of any tenant) has used is no conflict
      // here, and nothing in this answer says whether one has.
      throw new ApiError('unavailable', 'the sandbox card processor could not run the purchase right now', null, {
        cause: error,
      });
    }
  }

  /**
   * Sandbox keys: the processor clears (captures) or reverses one of this tenant's authorizations,
   * named by its id and, when two of the tenant's cards have that id, by `card_id` (400 naming it
   * otherwise). Only the tenant's own authorizations are looked at: an id on another tenant's card
   * is 404, as an id that exists nowhere.
   */
  async sandboxSettle(
    tenant: ResolvedKey,
    target: { authorizationId: string; cardId?: string | undefined },
    action: { kind: 'clear'; amountMinor: number } | { kind: 'reverse' },
  ) {
    if (tenant.mode !== 'test') throw new ApiError('forbidden', 'sandbox clearings need a sandbox (sk_test_) key');
    const notFound = () =>
      ApiError.notFound(
        target.cardId !== undefined
          ? `card authorization ${target.authorizationId} on card ${target.cardId}`
          : `card authorization ${target.authorizationId}`,
      );
    if (target.cardId !== undefined && !isUuid(target.cardId)) throw notFound();
    const found = await findAuthorizations(
      this.deps.orm.em.fork(),
      { tenantId: tenant.tenantId, ...(target.cardId !== undefined ? { cardId: target.cardId } : {}) },
      target.authorizationId,
      100,
    );
    const authorization = found[0];
    if (!authorization) throw notFound();
    if (found.length > 1) {
      throw ApiError.validation([
        {
          path: 'card_id',
          message: `is required: authorization ${target.authorizationId} is on ${found.length} of your cards (${found
            .map((row) => row.card_id)
            .join(', ')}); name one`,
        },
      ]);
    }
    const processor = this.deps.providers.cards;
    if (!processor.simulateSettlement) {
      throw new ApiError('failed_precondition', `card processor ${processor.name} cannot simulate clearings`);
    }
    const card = await this.row(tenant.tenantId, authorization.card_id);
    try {
      await processor.simulateSettlement(
        { cardReference: card.processor_reference, authorizationId: authorization.id },
        action,
      );
    } catch (error) {
      throw new ApiError('unavailable', 'the sandbox card processor could not send it right now', null, {
        cause: error,
      });
    }
    return {
      authorization_id: authorization.id,
      card_id: authorization.card_id,
      action: action.kind,
      amount_minor: action.kind === 'clear' ? action.amountMinor : null,
      status: 'sent' as const,
    };
  }
}
