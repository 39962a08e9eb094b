// Card side effects: the processor (lock, unlock, load) and PostgreSQL (card state, operations,
// fundings, the ledger and events, each change with its event in one transaction). Every
// activity is idempotent on its operation or funding id.
import type { EntityManager, MikroORM } from '@mikro-orm/postgresql';
import { ApplicationFailure } from '@temporalio/common';
import { cardView, type CardRow, fundingView, type FundingRow } from '../src/cards/views.ts';
import { recordEvent } from '../src/events/events.ts';
import { InsufficientFundsError, UnknownAccountError, openCardAccount, postMovement } from '../src/ledger/ledger.ts';
import type { CardIssueInput } from '../workflows/card-definitions.ts';
import type { Currency } from '../src/ledger/money.ts';
import { type Movement, cardFunding, cardFundingReverse } from '../src/ledger/movements.ts';
import type { Providers } from '../src/providers/registry.ts';
import { ProviderError } from '../src/providers/types.ts';
import { providerFailure } from './provider-failure.ts';

/** Posts a card movement; a card without its account is a fault no retry mends. */
async function postCardMovement(em: EntityManager, card: CardRow, movement: Movement): Promise<void> {
  try {
    await postMovement(em, card.tenant_id, movement, { currency: card.currency as Currency });
  } catch (error) {
    if (error instanceof UnknownAccountError) {
      throw ApplicationFailure.nonRetryable(`card ${card.id}: ${error.message}`, 'card_account_missing');
    }
    throw error;
  }
}

async function fundingWithCard(em: EntityManager, fundingId: string, lock = false) {
  const [funding] = await em.execute<FundingRow[]>(
    `select * from card_fundings where id = ?${lock ? ' for update' : ''}`,
    [fundingId],
  );
  if (!funding) throw ApplicationFailure.nonRetryable(`no card funding ${fundingId}`, 'unknown_funding');
  const [card] = await em.execute<CardRow[]>('select * from cards where id = ?', [funding.card_id]);
  return { funding, card: card! };
}

async function finishFunding(
  em: EntityManager,
  funding: FundingRow,
  card: CardRow,
  outcome: { status: 'succeeded' | 'failed'; reason?: string },
) {
  const [updated] = await em.execute<FundingRow[]>(
    `update card_fundings set status = ?, failure_reason = ?, completed_at = now() where id = ? and status = 'pending' returning *`,
    [outcome.status, outcome.reason ?? null, funding.id],
  );
  if (!updated) return;
  await em.execute(`update card_operations set status = ?, completed_at = now() where id = ?`, [
    outcome.status === 'succeeded' ? 'applied' : 'failed',
    funding.operation_id,
  ]);
  await recordEvent(em, {
    tenantId: card.tenant_id,
    type: outcome.status === 'succeeded' ? 'card.funded' : 'card.funding_failed',
    sourceKey: `card-funding:${funding.id}:${outcome.status}`,
    payload: { card_id: card.id, ...fundingView(updated) },
  });
}

export function createCardActivities({ orm, providers }: { orm: MikroORM; providers: Providers }) {
  return {
    /** Issues the card at the processor, once per card id (the processor is idempotent on it). */
    async issueCardAtProcessor(input: {
      cardId: string;
      customerId: string;
    }): Promise<{ cardReference: string; last4: string }> {
      try {
        return await providers.cards.issue({ reference: input.cardId, customerId: input.customerId });
      } catch (error) {
        return providerFailure(error, 'card_refused');
      }
    },

    /** The issued card's row, its ledger account and `card.created`, in one transaction, once. */
    async recordIssuedCard(input: CardIssueInput & { cardReference: string; last4: string }): Promise<void> {
      await orm.em.fork().transactional(async (tx) => {
        const [row] = await tx.execute<CardRow[]>(
          `insert into cards (id, tenant_id, customer_id, status, last4, currency, metadata, processor_reference)
           values (?, ?, ?, 'active', ?, ?, ?, ?) on conflict (id) do nothing returning *`,
          [
            input.cardId,
            input.tenantId,
            input.customerId,
            input.last4,
            input.currency,
            input.metadata ? JSON.stringify(input.metadata) : null,
            input.cardReference,
          ],
        );
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
      const [card] = await orm.em.fork().execute<CardRow[]>('select * from cards where id = ?', [input.cardId]);
      if (!card) throw ApplicationFailure.nonRetryable(`no card ${input.cardId}`, 'unknown_card');
      try {
        await providers.cards.setLocked(card.processor_reference, input.locked);
      } catch (error) {
        return providerFailure(error, 'processor_refused');
      }
      return orm.em.fork().transactional(async (tx) => {
        const target = input.locked ? 'locked' : 'active';
        const [changed] = await tx.execute<CardRow[]>(
          'update cards set status = ?, updated_at = now() where id = ? and status <> ? returning *',
          [target, input.cardId, target],
        );
        await tx.execute(
          `update card_operations set status = ?, completed_at = now() where id = ? and status = 'accepted'`,
          [changed ? 'applied' : 'unchanged', input.operationId],
        );
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
              cardFunding({ fundingId: funding.id, cardId: card.id, amountMinor: Number(funding.amount_minor) }),
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
     * wallet, and the funding fails.
     */
    async loadCardAtProcessor(input: { fundingId: string }): Promise<void> {
      const { funding, card } = await fundingWithCard(orm.em.fork(), input.fundingId);
      if (funding.status !== 'pending') return;
      let refused = false;
      try {
        await providers.cards.fund({
          cardReference: card.processor_reference,
          reference: funding.id,
          amountMinor: Number(funding.amount_minor),
        });
      } catch (error) {
        if (!(error instanceof ProviderError) || error.transient) throw error;
        refused = true;
      }
      await orm.em.fork().transactional(async (tx) => {
        const locked = await fundingWithCard(tx, input.fundingId, true);
        if (locked.funding.status !== 'pending') return;
        if (!refused) return finishFunding(tx, locked.funding, locked.card, { status: 'succeeded' });
        await postCardMovement(
          tx,
          card,
          cardFundingReverse({
            fundingId: funding.id,
            cardId: card.id,
            amountMinor: Number(locked.funding.amount_minor),
          }),
        );
        return finishFunding(tx, locked.funding, locked.card, { status: 'failed', reason: 'processor_refused' });
      });
    },

    /** An operation the workflow could not apply: recorded as failed, so the card's queue goes on. */
    async failCardOperation(input: { operationId: string; reason: string }): Promise<void> {
      await orm.em
        .fork()
        .execute(
          `update card_operations set status = 'failed', reason = coalesce(reason, ?), completed_at = now() where id = ? and status = 'accepted'`,
          [input.reason, input.operationId],
        );
    },

    async failFunding(input: { fundingId: string; reason: string }): Promise<void> {
      await orm.em.fork().transactional(async (tx) => {
        const { funding, card } = await fundingWithCard(tx, input.fundingId, true);
        await finishFunding(tx, funding, card, { status: 'failed', reason: input.reason });
      });
    },
  };
}

export type CardActivities = ReturnType<typeof createCardActivities>;
