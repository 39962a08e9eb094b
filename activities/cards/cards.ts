// Card side effects: the processor (lock, unlock, load) and PostgreSQL (card state, operations,
// fundings, the ledger and events, each change with its event in one transaction). Every
// activity is idempotent on its operation or funding id.
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { log } from '@temporalio/activity';
import { ApplicationFailure } from '@temporalio/common';
import { cardView, fundingView } from '../../src/cards/views.ts';
import {
  type CardRow,
  type FundingRow,
  findCard,
  findFundingWithCard,
  finishFundingRow,
  finishOperation,
  insertCard,
  setCardStatus,
} from '../../src/cards/store.ts';
import { recordEvent } from '../../src/events/events.ts';
import {
  InsufficientFundsError,
  UnknownAccountError,
  cardAccountCode,
  lockTenantAccountsIn,
  openCardAccount,
  postMovement,
} from '../../src/ledger/ledger.ts';
import type { CardIssueInput } from '../../workflows/cards/definitions.ts';
import type { Currency } from '../../src/lib/money.ts';
import { type Movement, cardFunding, cardFundingReverse } from '../../src/ledger/movements.ts';
import { type Providers, cardsFor } from '../../src/connectors/registry.ts';
import { ProviderError } from '../../src/connectors/capabilities.ts';
import { modeOf } from '../../src/tenants/tenants.ts';
import { providerFailure } from '../provider-failure.ts';
import type { CardActivities } from '../../workflows/cards/definitions.ts';

/** A card without its account is a fault no retry mends. */
function cardAccountFault(card: CardRow) {
  return (error: unknown): never => {
    if (error instanceof UnknownAccountError) {
      throw ApplicationFailure.nonRetryable(`card ${card.id}: ${error.message}`, 'card_account_missing');
    }
    throw error;
  };
}

/** Posts a card movement. */
async function postCardMovement(em: EntityManager, card: CardRow, movement: Movement): Promise<void> {
  await postMovement(em, card.tenant_id, movement, { currency: card.currency as Currency }).catch(
    cardAccountFault(card),
  );
}

/**
 * The card's available balance, its account and the wallet locked in id order (as every posting
 * and the authorization decision lock them: src/ledger, lockTenantAccounts), for the caller's
 * transaction.
 */
async function lockedCardBalance(tx: EntityManager, card: CardRow): Promise<number> {
  const accounts = await lockTenantAccountsIn(tx, {
    tenantId: card.tenant_id,
    currency: card.currency as Currency,
    codes: [cardAccountCode(card.id), 'wallet'],
  }).catch(cardAccountFault(card));
  return accounts.get(cardAccountCode(card.id))!.balanceMinor;
}

async function fundingWithCard(em: EntityManager, fundingId: string, lock = false) {
  const found = await findFundingWithCard(em, fundingId, lock);
  if (!found) throw ApplicationFailure.nonRetryable(`no card funding ${fundingId}`, 'unknown_funding');
  return found;
}

async function finishFunding(
  em: EntityManager,
  funding: FundingRow,
  card: CardRow,
  outcome: { status: 'succeeded' | 'failed'; reason?: string; unrecoveredMinor?: number },
) {
  const updated = await finishFundingRow(em, funding.id, outcome);
  if (!updated) return;
  await finishOperation(em, funding.operation_id, outcome.status === 'succeeded' ? 'applied' : 'failed', {
    onlyIfAccepted: false,
  });
  await recordEvent(em, {
    tenantId: card.tenant_id,
    type: outcome.status === 'succeeded' ? 'card.funded' : 'card.funding_failed',
    sourceKey: `card-funding:${funding.id}:${outcome.status}`,
    payload: { card_id: card.id, ...fundingView(updated) },
  });
  // Auto-reload's own event, with the funding, once the money is on the card (decisions §11).
  if (outcome.status === 'succeeded' && updated.source === 'auto_reload') {
    await recordEvent(em, {
      tenantId: card.tenant_id,
      type: 'card.auto_reloaded',
      sourceKey: `card-funding:${funding.id}:auto-reloaded`,
      payload: {
        card_id: card.id,
        threshold_minor: card.auto_reload_threshold_minor,
        funding: fundingView(updated),
      },
    });
  }
}

export function createCardActivities({ orm, providers }: { orm: MikroORM; providers: Providers }): CardActivities {
  return {
    /** Issues the card at the processor, once per card id (the processor is idempotent on it). */
    async issueCardAtProcessor(input: {
      cardId: string;
      customerId: string;
      /** The card's tenant (its mode picks the processor); absent in runs recorded before connectors: test. */
      tenantId?: string;
    }): Promise<{ cardReference: string; last4: string }> {
      const mode = input.tenantId ? await modeOf(orm.em.fork(), input.tenantId) : undefined;
      const processor = cardsFor(providers, mode ?? 'test');
      try {
        return await processor.issue({ reference: input.cardId, customerId: input.customerId });
      } catch (error) {
        return providerFailure(error, 'card_refused');
      }
    },

    /** The issued card's row, its ledger account and `card.created`, in one transaction, once. */
    async recordIssuedCard(input: CardIssueInput & { cardReference: string; last4: string }): Promise<void> {
      await orm.em.fork().transactional(async (tx) => {
        const row = await insertCard(tx, {
          id: input.cardId,
          tenant_id: input.tenantId,
          customer_id: input.customerId,
          status: 'active',
          last4: input.last4,
          currency: input.currency,
          metadata: input.metadata,
          processor_reference: input.cardReference,
        });
        if (!row) return; // recorded by an earlier attempt
        await openCardAccount(tx, input.tenantId, input.cardId, input.currency as Currency);
        await recordEvent(tx, {
          tenantId: input.tenantId,
          type: 'card.created',
          sourceKey: `card:${input.cardId}:created`,
          payload: cardView(row),
        });
      });
    },

    /** Locks or unlocks at the processor, then records it; an unchanged state is accepted and changes nothing. */
    async setCardLock(input: { cardId: string; operationId: string; locked: boolean }): Promise<{ changed: boolean }> {
      const card = await findCard(orm.em.fork(), input.cardId);
      if (!card) throw ApplicationFailure.nonRetryable(`no card ${input.cardId}`, 'unknown_card');
      const processor = cardsFor(providers, (await modeOf(orm.em.fork(), card.tenant_id)) ?? 'test');
      try {
        await processor.setLocked(card.processor_reference, input.locked);
      } catch (error) {
        return providerFailure(error, 'processor_refused');
      }
      return orm.em.fork().transactional(async (tx) => {
        const target = input.locked ? 'locked' : 'active';
        const changed = await setCardStatus(tx, input.cardId, target);
        await finishOperation(tx, input.operationId, changed ? 'applied' : 'unchanged', { onlyIfAccepted: true });
        if (changed) {
          await recordEvent(tx, {
            tenantId: changed.tenant_id,
            type: input.locked ? 'card.locked' : 'card.unlocked',
            sourceKey: `card-operation:${input.operationId}`,
            payload: cardView(changed),
          });
        }
        return { changed: Boolean(changed) };
      });
    },

    /** Wallet → card, one journal entry; a short wallet fails the funding and moves nothing. */
    async debitForFunding(input: { fundingId: string }): Promise<{ ok: boolean }> {
      return orm.em
        .fork()
        .transactional(async (tx) => {
          const { funding, card } = await fundingWithCard(tx, input.fundingId, true);
          if (funding.status === 'failed') return { ok: false };
          try {
            await postCardMovement(
              tx,
              card,
              cardFunding({ fundingId: funding.id, cardId: card.id, amountMinor: funding.amount_minor }),
            );
            return { ok: true };
          } catch (error) {
            if (!(error instanceof InsufficientFundsError)) throw error;
          }
          return { ok: false };
        })
        .then(async (result) => {
          if (!result.ok) {
            await orm.em.fork().transactional(async (tx) => {
              const { funding, card } = await fundingWithCard(tx, input.fundingId, true);
              await finishFunding(tx, funding, card, { status: 'failed', reason: 'insufficient_balance' });
            });
          }
          return result;
        });
    },

    /**
     * Loads the card at the processor (idempotent there on the funding id), then marks it funded.
     * A processor that is down is retried; one that refuses for good gets the money back: card →
     * wallet, and the funding fails (`processor_refused`).
     *
     * The money is on the card in the books from the debit on, so while the load waits (the
     * processor down, then refusing) authorizations may approve against it and hold it. The
     * refusal then returns to the wallet what the card still holds of the funding — its available
     * balance, up to the funding's amount — never more: the rest is held or cleared for purchases
     * the gateway approved, and the processor settles those from their holds. That rest is the
     * funding's `unrecovered_minor`; it stays on the card's side of the books (cards_match_fundings
     * counts it as funded), and it is an alert for operators: logged at error level with the card,
     * the funding and the amount, listed by `admin cards alerts`, counted by the API's metrics. The
     * funding ends here either way, so the card's queue goes on: returning the whole amount from a
     * card that no longer has it failed for ever and froze every later operation of the card.
     */
    async loadCardAtProcessor(input: { fundingId: string }): Promise<void> {
      const { funding, card } = await fundingWithCard(orm.em.fork(), input.fundingId);
      if (funding.status !== 'pending') return;
      let refused = false;
      const processor = cardsFor(providers, (await modeOf(orm.em.fork(), card.tenant_id)) ?? 'test');
      try {
        await processor.fund({
          cardReference: card.processor_reference,
          reference: funding.id,
          amountMinor: funding.amount_minor,
        });
      } catch (error) {
        if (!(error instanceof ProviderError) || error.transient) throw error;
        refused = true;
      }
      const unrecovered = await orm.em.fork().transactional(async (tx) => {
        const locked = await fundingWithCard(tx, input.fundingId, true);
        if (locked.funding.status !== 'pending') return 0;
        if (!refused) {
          await finishFunding(tx, locked.funding, locked.card, { status: 'succeeded' });
          return 0;
        }
        const amount = locked.funding.amount_minor;
        const returned = Math.min(amount, await lockedCardBalance(tx, locked.card));
        if (returned > 0) {
          await postCardMovement(
            tx,
            card,
            cardFundingReverse({ fundingId: funding.id, cardId: card.id, amountMinor: returned, fundingMinor: amount }),
          );
        }
        await finishFunding(tx, locked.funding, locked.card, {
          status: 'failed',
          reason: 'processor_refused',
          unrecoveredMinor: amount - returned,
        });
        return amount - returned;
      });
      if (unrecovered > 0) {
        log.error('card processor refused a load whose money purchases had already spent: not all of it returned', {
          tenantId: card.tenant_id,
          cardId: card.id,
          fundingId: funding.id,
          amountMinor: funding.amount_minor,
          returnedMinor: funding.amount_minor - unrecovered,
          unrecoveredMinor: unrecovered,
        });
      }
    },

    /** An operation the workflow could not apply: recorded as failed, so the card's queue goes on. */
    async failCardOperation(input: { operationId: string; reason: string }): Promise<void> {
      await finishOperation(orm.em.fork(), input.operationId, 'failed', { onlyIfAccepted: true, reason: input.reason });
    },

    async failFunding(input: { fundingId: string; reason: string }): Promise<void> {
      await orm.em.fork().transactional(async (tx) => {
        const { funding, card } = await fundingWithCard(tx, input.fundingId, true);
        await finishFunding(tx, funding, card, { status: 'failed', reason: input.reason });
      });
    },
  };
}

export type { CardActivities };
