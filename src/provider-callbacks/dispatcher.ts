// Hands each provider callback to whatever acts on its type (a transfer workflow's confirmation
// signal, an inbound credit workflow), once per (provider, event id). The record is committed
// first, on its own; the dispatch is then claimed with a lease on that row (not a row lock or an
// open transaction: nothing is held while the handler calls Temporal), and `dispatched_at` is
// written after. Handlers must still be idempotent (workflow ids, signal dedupe): a dispatch that
// ran but was not recorded (a crash in between), or one that outlived its lease, runs again.
import { setTimeout as sleep } from 'node:timers/promises';
import { randomUUID } from 'node:crypto';
import type { MikroORM } from '@mikro-orm/postgresql';

/** The request's logger, for handlers that must raise an alarm (a late answer that contradicts the books). */
export interface CallbackLogger {
  error(details: object, message: string): void;
  warn(details: object, message: string): void;
}

export interface ProviderCallback {
  provider: string;
  eventId: string;
  type: string;
  occurredAt: string | undefined;
  data: Record<string, unknown>;
  log: CallbackLogger;
}

/** Returns a short description of what was done, stored with the callback for operators. */
export type CallbackHandler = (callback: ProviderCallback) => Promise<string>;

/** A callback the provider waits on for an answer (a card authorization request, decisions §11). */
export interface AnsweredCallback {
  provider: string;
  eventId: string;
  data: Record<string, unknown>;
  log: CallbackLogger & { info(details: object, message: string): void };
}

/**
 * Answers a callback while the provider waits: not recorded as a callback nor dispatched under a
 * lease (its own row is the record, and a repeat gets the stored answer). Returns the fields the
 * answer adds to the response's data; throws the contract's validation error for data it cannot read.
 */
export type CallbackAnswerer = (callback: AnsweredCallback) => Promise<Record<string, unknown>>;

export class CallbackDispatcher {
  private readonly handlers = new Map<string, CallbackHandler>();
  private readonly answerers = new Map<string, CallbackAnswerer>();

  on(type: string, handler: CallbackHandler): this {
    this.handlers.set(type, handler);
    return this;
  }

  /** The type is answered at once by `answerer`, instead of being recorded and dispatched. */
  answer(type: string, answerer: CallbackAnswerer): this {
    this.answerers.set(type, answerer);
    return this;
  }

  answererOf(type: string): CallbackAnswerer | undefined {
    return this.answerers.get(type);
  }

  async dispatch(callback: ProviderCallback): Promise<string> {
    const handler = this.handlers.get(callback.type);
    if (!handler) return `recorded: no handler for ${callback.type}`;
    return handler(callback);
  }
}

/** The callback is recorded but not applied yet; the provider should send it again. */
export class CallbackNotApplied extends Error {
  readonly code: 'dispatch_failed' | 'dispatch_in_progress';

  constructor(code: CallbackNotApplied['code'], message: string, options: { cause?: unknown } = {}) {
    super(message, options);
    this.name = 'CallbackNotApplied';
    this.code = code;
  }
}

export interface DispatchOnceOptions {
  /** How long a dispatch claim holds (30 s): a request that dies mid-dispatch blocks retries no longer. */
  leaseMs?: number;
  /** How long a repeat waits for a dispatch under way elsewhere before answering "retry later" (3 s). */
  waitMs?: number;
}

/**
 * Records the callback (`raw` is its body), then dispatches it unless it was dispatched before.
 * A repeat that arrives while another delivery dispatches waits for that one's outcome.
 */
export async function dispatchOnce(
  orm: MikroORM,
  dispatcher: CallbackDispatcher,
  callback: ProviderCallback,
  raw: string,
  options: DispatchOnceOptions = {},
): Promise<'accepted' | 'duplicate'> {
  const em = orm.em.fork();
  const leaseMs = options.leaseMs ?? 30_000;
  const key = [callback.provider, callback.eventId];
  // The first delivery records the callback already claimed by it, in the one statement; a repeat
  // records nothing and claims the row below, unless it is dispatched or claimed by another.
  let [claimed] = await em.execute<{ id: string }[]>(
    `insert into provider_callbacks (id, provider, event_id, type, payload, dispatch_claimed_until)
     values (?, ?, ?, ?, ?, now() + ? * interval '1 millisecond')
     on conflict on constraint provider_callbacks_event do nothing returning id`,
    [randomUUID(), callback.provider, callback.eventId, callback.type, raw, leaseMs],
  );
  const waitUntil = Date.now() + (options.waitMs ?? 3_000);
  for (;;) {
    // The claim is one statement: concurrent deliveries queue on the row for its duration only.
    claimed ??= (
      await em.execute<{ id: string }[]>(
        `update provider_callbacks set dispatch_claimed_until = now() + ? * interval '1 millisecond'
          where provider = ? and event_id = ? and dispatched_at is null
            and (dispatch_claimed_until is null or dispatch_claimed_until <= now())
          returning id`,
        [leaseMs, ...key],
      )
    )[0];
    if (claimed) {
      let result: string;
      try {
        result = await dispatcher.dispatch(callback);
      } catch (cause) {
        // Let the provider's retry dispatch it at once rather than after the lease.
        await em.execute('update provider_callbacks set dispatch_claimed_until = null where id = ?', [claimed.id]);
        throw new CallbackNotApplied('dispatch_failed', 'callback recorded but its dispatch failed', { cause });
      }
      await em.execute(
        `update provider_callbacks set dispatched_at = now(), dispatch_result = ?, dispatch_claimed_until = null
          where id = ?`,
        [result.slice(0, 500), claimed.id],
      );
      return 'accepted';
    }
    const [row] = await em.execute<{ dispatched_at: string | null }[]>(
      'select dispatched_at from provider_callbacks where provider = ? and event_id = ?',
      key,
    );
    if (row?.dispatched_at) return 'duplicate';
    if (Date.now() >= waitUntil) {
      throw new CallbackNotApplied('dispatch_in_progress', 'callback is being dispatched by another delivery');
    }
    await sleep(25);
  }
}
