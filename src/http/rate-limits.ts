// Rate limits (decisions §12, §21): three budgets a minute, counted in PostgreSQL so that they hold
// across every API replica (./rate-limit-windows.ts), each a fixed 60-second window aligned on the
// database's clock. An authenticated request counts against its API key's id (so every spelling of
// the Authorization header is one budget; a person in the console, against their own id): policy
// "per-key". A request without a valid key (missing, malformed, unknown or revoked) counts against
// its client address on a smaller budget, so that guessing keys is limited too: "per-address".
// Public routes (health, docs, the console's pages) count per address on the general budget:
// "public". The auth hook (./auth.ts) picks the budget once it knows which case a request is.
//
// Every answer a budget applies to carries the IETF httpapi draft's `RateLimit-Policy` and
// `RateLimit` fields beside the `X-RateLimit-*` ones; past the budget, 429 with `Retry-After`.
// When the count cannot be read (PostgreSQL down, or slower than COUNT_WAIT_MS), the request goes
// on uncounted (fail open: a rate limiter must not turn a database hiccup into refusals), with a
// metric per such request and a log line when it starts and ends; for PAUSE_MS after a failure
// requests do not wait on the counter at all. There is no per-process budget to fall back on:
// one would silently hand each replica a whole budget of its own.
import { normalizeIP } from '@fastify/rate-limit';
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from './errors.ts';
import type { RateLimitCounter, WindowCount } from './rate-limit-windows.ts';

export type RateLimitCheck = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown>;

export interface RateLimits {
  /** Authenticated requests, per API key id (policy "per-key"). */
  perKey: RateLimitCheck;
  /** Requests without a valid key, per client address (policy "per-address"). */
  unauthenticated: RateLimitCheck;
  /** Public routes, per client address (policy "public"). */
  publicRoutes: RateLimitCheck;
}

export interface RateLimitConfig {
  perMinute: number;
  unauthenticatedPerMinute: number;
}

/** A budget as `RateLimit-Policy` names it. */
export interface RateLimitPolicy {
  name: 'per-key' | 'per-address' | 'public';
  /** Requests per window. */
  quota: number;
}

/** Every budget's window. */
export const RATE_LIMIT_WINDOW_MS = 60_000;
/** The longest a request waits for its count before it goes on uncounted. */
export const COUNT_WAIT_MS = 2_000;
/** After the counter failed, how long requests go on uncounted without asking it. */
export const PAUSE_MS = 5_000;
/** Rows of ended windows deleted per statement, and statements per prune. */
const PRUNE_BATCH = 5_000;
const PRUNE_BATCHES = 20;

/**
 * The rate-limit fields of an answer: the policy always, the counts when the request was counted
 * (`counted` absent: the counter could not be read), `Retry-After` when it is over the budget.
 */
export function rateLimitHeaders(policy: RateLimitPolicy, counted?: WindowCount): Record<string, string> {
  const headers: Record<string, string> = {
    'ratelimit-policy': `"${policy.name}";q=${policy.quota};w=${RATE_LIMIT_WINDOW_MS / 1000}`,
    'x-ratelimit-limit': String(policy.quota),
  };
  if (!counted) return headers;
  const remaining = Math.max(0, policy.quota - counted.count);
  const reset = Math.max(1, Math.ceil(counted.msLeft / 1000));
  headers.ratelimit = `"${policy.name}";r=${remaining};t=${reset}`;
  headers['x-ratelimit-remaining'] = String(remaining);
  headers['x-ratelimit-reset'] = String(reset);
  if (counted.count > policy.quota) headers['retry-after'] = String(reset);
  return headers;
}

export interface RateLimitDeps {
  counter: RateLimitCounter;
  log: FastifyBaseLogger;
  /** Told of each request that went on uncounted, by policy name. */
  uncounted?: (policy: RateLimitPolicy['name']) => void;
  /** The clock the pause is kept by (tests move it). */
  now?: () => number;
}

/** The shared counter, as the checks use it: bounded waits, the pause after a failure, the prunes. */
export class SharedBudgets {
  readonly #deps: RateLimitDeps;
  readonly #now: () => number;
  #pausedUntil = 0;
  #failing = false;
  #prunedBefore = 0;
  #pruning: Promise<void> = Promise.resolve();

  constructor(deps: RateLimitDeps) {
    this.#deps = deps;
    this.#now = deps.now ?? Date.now;
  }

  /** Counts one request; undefined when the counter could not answer within `waitMs`. */
  async count(bucket: string, waitMs: number): Promise<WindowCount | undefined> {
    if (this.#now() < this.#pausedUntil) return undefined;
    let timer: NodeJS.Timeout | undefined;
    const counting = this.#deps.counter.count(bucket, RATE_LIMIT_WINDOW_MS);
    counting.catch(() => undefined);
    try {
      const counted = await Promise.race([
        counting,
        new Promise<never>((_resolve, reject) => {
          timer = setTimeout(
            () => reject(new Error(`the rate-limit counter did not answer within ${waitMs} ms`)),
            waitMs,
          );
        }),
      ]);
      if (this.#failing) {
        this.#failing = false;
        this.#deps.log.info('rate-limit counter answers again: requests are counted');
      }
      if (counted.windowStart > this.#prunedBefore) this.#prune(counted.windowStart);
      return counted;
    } catch (error) {
      this.#pausedUntil = this.#now() + PAUSE_MS;
      if (!this.#failing) {
        this.#failing = true;
        this.#deps.log.warn(
          { err: error },
          'rate-limit counter unavailable: requests go on uncounted (gateway_rate_limit_uncounted_total)',
        );
      }
      return undefined;
    } finally {
      clearTimeout(timer);
    }
  }

  /** Waits for a prune under way (the app is closing). */
  settle(): Promise<void> {
    return this.#pruning;
  }

  // Once per window and process, off the request's path: the rows of the windows that have ended.
  #prune(before: number): void {
    this.#prunedBefore = before;
    this.#pruning = this.#pruning.then(async () => {
      try {
        for (let batch = 0; batch < PRUNE_BATCHES; batch += 1) {
          if ((await this.#deps.counter.prune(before, PRUNE_BATCH)) < PRUNE_BATCH) break;
        }
      } catch (error) {
        this.#deps.log.warn({ err: error }, 'could not prune ended rate-limit windows; the next window tries again');
      }
    });
  }
}

const clientAddress = (request: FastifyRequest) => normalizeIP(request.ip);

export function registerRateLimits(app: FastifyInstance, config: RateLimitConfig, deps: RateLimitDeps): RateLimits {
  const budgets = new SharedBudgets(deps);
  app.addHook('onClose', () => budgets.settle());
  // A request is counted once, whichever budget counted it first.
  const counted = new WeakSet<FastifyRequest>();
  const check =
    (policy: RateLimitPolicy, idOf: (request: FastifyRequest) => string, refusal: string): RateLimitCheck =>
    async (request, reply) => {
      if (counted.has(request)) return;
      counted.add(request);
      // Within the request's own deadline (./deadlines.ts) too: the count never makes it later.
      const left = request.deadlineAt === undefined ? COUNT_WAIT_MS : request.deadlineAt - Date.now();
      const count = await budgets.count(`${policy.name}:${idOf(request)}`, Math.max(0, Math.min(COUNT_WAIT_MS, left)));
      if (!count) deps.uncounted?.(policy.name);
      const headers = rateLimitHeaders(policy, count);
      if (!count || count.count <= policy.quota) {
        reply.headers(headers);
        return;
      }
      const { 'retry-after': retryAfter, ...rest } = headers;
      reply.headers(rest);
      throw new ApiError(
        'rate_limited',
        `${refusal} of ${policy.quota} requests a minute exceeded; retry in ${retryAfter} s`,
        null,
        { headers: { 'retry-after': retryAfter ?? '1' } },
      );
    };
  return {
    perKey: check(
      { name: 'per-key', quota: config.perMinute },
      (request) => {
        if (!request.auth) throw new Error('the per-key rate limit needs an authenticated request');
        return request.auth.keyId;
      },
      'rate limit',
    ),
    unauthenticated: check(
      { name: 'per-address', quota: config.unauthenticatedPerMinute },
      clientAddress,
      'rate limit for requests without a valid API key from this address',
    ),
    publicRoutes: check({ name: 'public', quota: config.perMinute }, clientAddress, 'rate limit'),
  };
}
