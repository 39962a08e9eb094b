// Bounded waits (decisions §12): no request waits more than DEPENDENCY_TIMEOUT_MS for Temporal or
// PostgreSQL. Three layers, each enough on its own for its dependency, together a guarantee:
// - every Temporal call a request makes shares the request's absolute deadline (the handler runs in
//   the connection's `withDeadline` scope), so a multi-call operation such as Update-with-Start,
//   which re-sends until the update is accepted, stops at it too; calls outside a request get a
//   deadline of their own from an interceptor, and connecting is bounded as well;
// - the API's PostgreSQL pool gives up acquiring, connecting and reading after it (src/db/orm.ts);
// - every route handler races the time left since the request arrived, so that nothing — a
//   paused server whose socket stays open, a slow chain of calls — holds a request past it.
// Past the deadline the answer is 503 `UNAVAILABLE` / `unavailable` with Retry-After. The work
// that was cut off may still finish; every create is keyed by its reference or Idempotency-Key, so
// a retry meets the one transfer (created once, or not at all).
import {
  Connection,
  type ConnectionOptions,
  NamespaceNotFoundError,
  ServiceError,
  defaultGrpcRetryOptions,
  isGrpcServiceError,
  makeGrpcRetryInterceptor,
} from '@temporalio/client';
import { InterceptingCall } from '@grpc/grpc-js';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { ApiError } from './errors.ts';

declare module 'fastify' {
  interface FastifyRequest {
    /** When this request's waits on dependencies must end (epoch ms). */
    deadlineAt?: number;
    /**
     * Set when the deadline answered this request while its handler was still running: settles
     * with what the handler answered in the end (undefined if it failed), for the idempotency
     * record to keep, so that a retry gets that answer instead of doing the work twice.
     */
    lateAnswer?: Promise<LateAnswer | undefined>;
  }
}

/** What a handler cut off by the deadline answered once it finished. */
export interface LateAnswer {
  status: number;
  payload: unknown;
}

/**
 * Waits for `work` until `deadlineAt`, then rejects with what `expired()` returns while the work
 * goes on (its failure is then nobody's to answer).
 */
function raceDeadline<T>(deadlineAt: number, work: Promise<T>, expired: () => ApiError): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const expiry = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(expired()), Math.max(deadlineAt - Date.now(), 0));
  });
  work.catch(() => undefined);
  return Promise.race([work, expiry]).finally(() => clearTimeout(timer));
}

/** For the waits a request makes outside its handler: 503 at the request's deadline. */
export async function beforeDeadline<T>(deadlineAt: number | undefined, work: Promise<T>): Promise<T> {
  if (deadlineAt === undefined) return work;
  return raceDeadline(deadlineAt, work, () =>
    unavailable('PostgreSQL did not answer in time; retry with the same Idempotency-Key'),
  );
}

/** Seconds a client should wait before retrying after a dependency was unavailable. */
export const RETRY_AFTER_SECONDS = 2;

export function unavailable(message: string, cause?: unknown): ApiError {
  return new ApiError('unavailable', message, null, {
    headers: { 'retry-after': String(RETRY_AFTER_SECONDS) },
    ...(cause === undefined ? {} : { cause }),
  });
}

type GrpcInterceptor = NonNullable<ConnectionOptions['interceptors']>[number];

/** Gives every call without a deadline of its own one `timeoutMs` from now. */
export function deadlineInterceptor(timeoutMs: number): GrpcInterceptor {
  return (options, nextCall) =>
    new InterceptingCall(nextCall(options.deadline ? options : { ...options, deadline: Date.now() + timeoutMs }));
}

/** A grpc deadline (a Date or epoch ms) as epoch ms; undefined when the call has none. */
function deadlineMs(deadline: Date | number | undefined): number | undefined {
  if (deadline === undefined) return undefined;
  const ms = deadline instanceof Date ? deadline.getTime() : deadline;
  return Number.isFinite(ms) ? ms : undefined;
}

/**
 * The SDK's default retries of transient failures (UNAVAILABLE and the like), kept within bounds:
 * none is scheduled past the call's own deadline, and none after the connection began to close.
 * The SDK re-sends from a timer, so a retry that fires after the channel closed would throw
 * "Channel has been shut down" outside any promise; `settle()` waits out those already scheduled.
 */
export class BoundedRetries {
  private closing = false;
  private quietAt = 0;

  interceptor(): GrpcInterceptor {
    const defaults = defaultGrpcRetryOptions();
    return (options, nextCall) => {
      const deadline = deadlineMs(options.deadline);
      let delay = 0;
      return makeGrpcRetryInterceptor({
        retryableDecider: (attempt, status) => {
          if (this.closing || !defaults.retryableDecider(attempt, status)) return false;
          delay = defaults.delayFunction(attempt, status);
          if (deadline !== undefined && Date.now() + delay >= deadline) return false;
          this.quietAt = Math.max(this.quietAt, Date.now() + delay);
          return true;
        },
        delayFunction: () => delay,
      })(options, nextCall);
    };
  }

  /** Schedules no more retries and waits until the scheduled ones have fired. */
  async settle(): Promise<void> {
    this.closing = true;
    const wait = this.quietAt - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait + 10));
  }
}

/** A Temporal client connection that lets its scheduled retries fire before it closes. */
class SettlingConnection extends Connection {
  retries?: BoundedRetries;

  override async close(): Promise<void> {
    await this.retries?.settle();
    await super.close();
  }
}

/**
 * The API's Temporal connection: lazy (the API starts, and /health says 503, while Temporal is
 * still coming up), connecting and every call bounded by `timeoutMs`, default retries kept
 * inside each call's deadline.
 */
export function boundedTemporalConnection(address: string, timeoutMs: number): Connection {
  const retries = new BoundedRetries();
  const connection = SettlingConnection.lazy({
    address,
    connectTimeout: timeoutMs,
    interceptors: [deadlineInterceptor(timeoutMs), retries.interceptor()],
  }) as SettlingConnection;
  connection.retries = retries;
  return connection;
}

const PG_UNAVAILABLE = [
  'timeout exceeded when trying to connect',
  'Query read timeout',
  'Connection terminated',
  'connect ECONNREFUSED',
];

/** Temporal or PostgreSQL could not be reached or did not answer in time. */
export function isDependencyUnavailable(error: unknown): boolean {
  for (let current = error, depth = 0; current instanceof Error && depth < 8; depth += 1) {
    if (current instanceof ServiceError || isGrpcServiceError(current)) return true;
    // The client turns the server's NOT_FOUND for our namespace into this error, without the gRPC
    // error as its cause. The namespace exists (setup registers it); Temporal's dev server answers
    // so for a moment after it was stalled (found by `npm run chaos`, SIGSTOP/SIGCONT): Temporal
    // cannot serve the request right now, which is a 503 to retry, not a 500.
    if (current instanceof NamespaceNotFoundError) return true;
    const code = (current as { code?: unknown }).code;
    // PostgreSQL's own codes: connection exceptions (08…), shutdown (57P01–57P03), query canceled.
    if (typeof code === 'string' && (/^08/.test(code) || /^57P0[1-3]$/.test(code) || code === '57014')) return true;
    if (code === 'ECONNREFUSED' || code === 'ECONNRESET') return true;
    if (PG_UNAVAILABLE.some((text) => current instanceof Error && current.message.includes(text))) return true;
    current = current.cause;
  }
  return false;
}

/**
 * Starts each request's clock on arrival and races every route handler against it. Public routes
 * (health, docs, provider callbacks) are raced too: none may hang.
 */
export function registerDependencyDeadline(
  app: FastifyInstance,
  timeoutMs: number,
  temporal: Pick<Connection, 'withDeadline'>,
): void {
  app.addHook('onRequest', (request, _reply, done) => {
    request.deadlineAt = Date.now() + timeoutMs;
    done();
  });
  app.addHook('onRoute', (route) => {
    const handler = route.handler;
    route.handler = function deadlineBound(this: FastifyInstance, request, reply) {
      const deadlineAt = request.deadlineAt ?? Date.now() + timeoutMs;
      // Once the deadline has answered, the handler's own status and send are caught here (the
      // real reply is gone) and become its late answer.
      let cutOff = false;
      let late: { status?: number; payload?: unknown; sent: boolean } = { sent: false };
      const handlerReply: FastifyReply = new Proxy(reply, {
        get(target, property, receiver) {
          if (cutOff && (property === 'code' || property === 'status')) {
            return (status: number) => {
              late.status = status;
              return receiver as FastifyReply;
            };
          }
          if (cutOff && property === 'send') {
            return (payload: unknown) => {
              late = { ...late, payload, sent: true };
              return receiver as FastifyReply;
            };
          }
          return Reflect.get(target, property, receiver) as unknown;
        },
      });
      const work = temporal.withDeadline(deadlineAt, () =>
        Promise.resolve().then(() => handler.call(this, request, handlerReply)),
      );
      return raceDeadline(deadlineAt, work, () => {
        cutOff = true;
        // Status before the cut: a handler that set 201 and then waited keeps it.
        const statusBefore = reply.statusCode;
        request.lateAnswer = work.then(
          (result): LateAnswer | undefined => {
            if (late.sent) return { status: late.status ?? statusBefore, payload: late.payload };
            if (result === undefined || result === handlerReply || result === reply) return undefined;
            return { status: late.status ?? statusBefore, payload: result };
          },
          () => undefined,
        );
        return unavailable(
          `a dependency (Temporal or PostgreSQL) did not answer within ${timeoutMs} ms; ` +
            'retry with the same reference or Idempotency-Key',
        );
      });
    };
  });
}
