// Idempotency-Key (IETF draft semantics, decisions §4) for every authenticated POST, as one
// mechanism switched on per route (`config.idempotent`, on by default for authenticated POSTs;
// `false` opts out). Duplicates are settled in PostgreSQL before any handler runs:
// - the first request claims the key (one insert) and drives the work; its answer is stored for
//   24 hours when it is below 500, and the key is released when it is a 5xx;
// - a repeat with the same body replays the first answer with `idempotent-replayed: true` (a 201
//   replays as 200: the create already happened); a different body or endpoint → 422
//   idempotency_key_reused;
// - a repeat while the first is still running waits for its answer, within the request's
//   deadline, then gets 409 idempotency_key_in_use;
// - a claim whose request died (process killed) is held only for a lease, then taken over.
// A route may also name the key its body carries (`config.naturalKey`: a transfer's `reference`, a
// virtual account's `request_id`, a card operation's `idempotency_key`). Without the header, that
// key is claimed the same way, so identical creates are settled here too, before Temporal, with two
// differences that keep the resource's own rules: once the first request has answered, a repeat
// goes to the handler, which answers from the resource as it is now (200, no workflow call), and
// so does a different body (409 duplicate_reference); and only a success is kept (a refusal is
// shared with the requests waiting on it, then the key is free for a retry).
// A route whose answer holds a secret the gateway never stores (a new API key's) keeps a copy
// without it (`config.storedAnswer`): a repeat then answers the same object with the secret null.
// The stored request fingerprint is keyed: HMAC-SHA256 of `method path\nbody` under a server key
// derived from WEBHOOK_ENCRYPTION_KEY (every API replica has the same one), never a plain digest,
// so a dump of the table cannot be used to try guesses at a secret a body held (a webhook
// endpoint's signing_secret; BVN routes hash a keyed fingerprint of the BVN inside that).
import { createHmac, hkdfSync, randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { MikroORM } from '@mikro-orm/postgresql';
import { type LateAnswer, beforeDeadline } from './deadlines.ts';
import { ApiError } from './errors.ts';
import { canonicalJson, sha256 } from '../lib/canonical.ts';

export const IDEMPOTENCY_TTL_HOURS = 24;
/** How long a claim is held for a handler the deadline answered while it ran on. */
const MAX_LATE_HOLD_MS = 5 * 60_000;

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Honour Idempotency-Key on this route (default: every authenticated POST). */
    idempotent?: boolean;
    /** The replay key the validated body itself carries, used when no Idempotency-Key is sent. */
    naturalKey?: (body: unknown) => string | undefined;
    /**
     * What of the validated body the stored request hash covers, for a body that holds a secret
     * with few possible values (a BVN): a plain SHA-256 of it could be reversed by trying them all,
     * so such a route hands over a keyed fingerprint instead. Default: the body itself.
     */
    fingerprint?: (body: unknown) => unknown;
    /**
     * What of a JSON answer the record keeps and a repeat replays, for an answer holding a secret
     * the gateway never stores (a new API key's): the answer itself by default.
     */
    storedAnswer?: (answer: unknown) => unknown;
  }
  interface FastifyRequest {
    /** The key this request claimed, to be completed or released when it answers. */
    idempotencyClaim?: { tenantId: string; key: string; token: string; natural: boolean };
  }
}
/** The key stored request fingerprints are made under: HKDF-SHA256 of the server secret, its own label. */
export function idempotencyFingerprintKey(serverSecret: Buffer): Buffer {
  return Buffer.from(hkdfSync('sha256', serverSecret, Buffer.alloc(0), 'naira-gateway idempotency fingerprint v1', 32));
}

/** What an idempotency record keeps of a request: hex HMAC-SHA256 of `method path\ncanonical body`. */
export function requestFingerprint(key: Buffer, method: string, path: string, hashed: unknown): string {
  return createHmac('sha256', key)
    .update(`${method} ${path}\n${canonicalJson(hashed)}`)
    .digest('hex');
}

/** The request's Idempotency-Key header: undefined when absent; 400 when malformed. */
export function idempotencyKeyOf(request: FastifyRequest): string | undefined {
  const header = request.headers['idempotency-key'];
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined) return undefined;
  if (key.length < 1 || key.length > 255) {
    throw ApiError.validation([{ path: 'Idempotency-Key', message: 'must be 1 to 255 characters' }]);
  }
  return key;
}

interface StoredKey {
  request_hash: string;
  state: 'processing' | 'completed';
  response_status: number | null;
  response_body: unknown;
  lease_expired: boolean;
}

const WAIT_STEP_MS = [25, 50, 100, 200];

export interface IdempotencyOptions {
  orm: MikroORM;
  /** How long a claim holds without an answer (a request never runs longer than its deadline). */
  leaseMs: number;
  /** idempotencyFingerprintKey(WEBHOOK_ENCRYPTION_KEY): the same on every replica. */
  fingerprintKey: Buffer;
}

export function registerIdempotency(app: FastifyInstance, options: IdempotencyOptions): void {
  const { orm, leaseMs, fingerprintKey } = options;
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    const config = (route.config ?? {}) as { public?: boolean; idempotent?: boolean };
    if (config.idempotent === undefined && methods.includes('POST') && !config.public) {
      route.config = { ...config, idempotent: true };
    }
  });

  app.addHook('preHandler', async (request, reply) => {
    if (!request.routeOptions.config.idempotent || !request.auth) return;
    const header = idempotencyKeyOf(request);
    const bodyKey = header === undefined ? request.routeOptions.config.naturalKey?.(request.body) : undefined;
    if (header === undefined && bodyKey === undefined) return;
    const natural = header === undefined;
    const tenantId = request.auth.tenantId;
    const path = request.url.split('?')[0] ?? request.url;
    // Scoped to the resource path (a card's fundings are keyed per card). A line feed cannot occur
    // in a header value, so a body's key never meets a client's header key.
    const key = header ?? `\n${path}\n${bodyKey}`;
    const fingerprint = request.routeOptions.config.fingerprint;
    const hashed = fingerprint ? fingerprint(request.body) : (request.body ?? null);
    const requestHash = requestFingerprint(fingerprintKey, request.method, path, hashed);
    // Records written before fingerprints were keyed hold the plain digest; for the 24 hours they
    // live, the same request still matches them (compared here, never stored again).
    const legacyHash = sha256(`${request.method} ${path}\n${canonicalJson(hashed)}`);
    const em = orm.em.fork();
    const deadline = (request.deadlineAt ?? Date.now() + 10_000) - 250;

    // Once this request has seen the key held by a live claim, it waits for that claim's answer and
    // takes that answer, even a refusal that expires at once; it claims again only if the holder
    // released the key (5xx) or died (lease).
    let mayClaim = true;
    for (let attempt = 0; ; attempt += 1) {
      // Claim the key, or take over a claim that expired (24 h) or whose request died (lease).
      const token = randomUUID();
      const [claimed] = !mayClaim
        ? []
        : await beforeDeadline(
            request.deadlineAt,
            em.execute<{ key: string }[]>(
              `insert into idempotency_keys
                 (tenant_id, key, method, path, request_hash, state, expires_at, locked_until, claim_token)
         values (?, ?, ?, ?, ?, 'processing', now() + (? * interval '1 hour'), now() + (? * interval '1 millisecond'), ?)
         on conflict (tenant_id, key) do update
           set method = excluded.method, path = excluded.path, request_hash = excluded.request_hash,
               state = 'processing', response_status = null, response_body = null,
               expires_at = excluded.expires_at, locked_until = excluded.locked_until, created_at = now(),
               claim_token = excluded.claim_token
           where idempotency_keys.expires_at <= now()
              or (idempotency_keys.state = 'processing' and idempotency_keys.locked_until <= now()
                  and idempotency_keys.request_hash in (excluded.request_hash, ?))
         returning key`,
              [tenantId, key, request.method, path, requestHash, IDEMPOTENCY_TTL_HOURS, leaseMs, token, legacyHash],
            ),
          );
      if (claimed) {
        request.idempotencyClaim = { tenantId, key, token, natural };
        return;
      }
      const [stored] = await beforeDeadline(
        request.deadlineAt,
        em.execute<StoredKey[]>(
          `select request_hash, state, response_status, response_body, locked_until <= now() as lease_expired
             from idempotency_keys where tenant_id = ? and key = ?`,
          [tenantId, key],
        ),
      );
      if (!stored) {
        mayClaim = true; // released in between: claim again
        continue;
      }
      if (stored.request_hash !== requestHash && stored.request_hash !== legacyHash) {
        if (!natural) {
          throw new ApiError(
            'idempotency_key_reused',
            'this Idempotency-Key was already used with a different request body or endpoint',
          );
        }
        // Another body holds the resource's key: once its request has answered (or died), the
        // resource decides (409 duplicate_reference); until then this one waits like a repeat.
        if (stored.state === 'completed' || stored.lease_expired) return;
      } else if (stored.state === 'completed') {
        // A body's key that made its resource: the resource answers the repeat as it is now (200).
        if (natural && (stored.response_status ?? 500) < 300) return;
        const status = stored.response_status === 201 ? 200 : (stored.response_status ?? 200);
        return reply.status(status).header('idempotent-replayed', 'true').send(stored.response_body);
      }
      mayClaim = stored.state === 'processing' && stored.lease_expired;
      if (Date.now() >= deadline) {
        throw new ApiError(
          'idempotency_key_in_use',
          natural
            ? 'a request with the same key in its body is still being processed; retry shortly'
            : 'a request with this Idempotency-Key is still being processed',
        );
      }
      // The first request is still running: wait for its answer.
      const step = WAIT_STEP_MS[Math.min(attempt, WAIT_STEP_MS.length - 1)]!;
      await new Promise((resolve) => setTimeout(resolve, Math.min(step, Math.max(deadline - Date.now(), 1))));
    }
  });

  // The claimant's answer completes the key (below 500) or releases it (5xx), before it is sent. A
  // body's key keeps only a success; a refusal is kept for the requests already waiting on it and
  // expires at once, so the next request with that key runs afresh. A request the deadline
  // answered while its handler still ran keeps its claim until the handler finishes, and its
  // answer then is kept, so a retry gets it rather than doing the work a second time. None of
  // this holds the response past the request's deadline: a late write finishes in the background.
  app.addHook('onSend', async (request, reply: FastifyReply, payload) => {
    const claim = request.idempotencyClaim;
    if (!claim) return payload;
    request.idempotencyClaim = undefined;
    const late = request.lateAnswer;
    const write =
      reply.statusCode >= 500 && late
        ? holdUntilLate(orm, claim, late, leaseMs, request.log, request.routeOptions.config.storedAnswer)
        : settle(orm, claim, reply.statusCode, payload, request.routeOptions.config.storedAnswer);
    await beforeDeadline(Math.max(request.deadlineAt ?? 0, Date.now()), write).catch((error: unknown) => {
      request.log.warn({ err: error }, 'idempotency record not written in time; its lease will release it');
    });
    return payload;
  });
}

type Claim = NonNullable<FastifyRequest['idempotencyClaim']>;

/** Completes the claim with the answer (below 500) or releases it (5xx). */
async function settle(
  orm: MikroORM,
  claim: Claim,
  status: number,
  payload: unknown,
  storedAnswer?: (answer: unknown) => unknown,
): Promise<void> {
  const em = orm.em.fork();
  if (status >= 500) {
    await em.execute(`delete from idempotency_keys where tenant_id = ? and key = ? and claim_token = ?`, [
      claim.tenantId,
      claim.key,
      claim.token,
    ]);
    return;
  }
  let text = typeof payload === 'string' ? payload : payload == null ? 'null' : JSON.stringify(payload);
  if (storedAnswer) text = JSON.stringify(storedAnswer(JSON.parse(text)) ?? null);
  const keep = !claim.natural || status < 300;
  await em.execute(
    `update idempotency_keys set state = 'completed', response_status = ?, response_body = ?::jsonb, locked_until = null,
            expires_at = case when ? then expires_at else now() end
      where tenant_id = ? and key = ? and claim_token = ?`,
    [status, text, keep, claim.tenantId, claim.key, claim.token],
  );
}

/**
 * The deadline answered 503 while the handler ran on: the claim is held (its lease renewed while
 * the handler runs) and settled with the handler's own answer once it has one.
 */
async function holdUntilLate(
  orm: MikroORM,
  claim: Claim,
  late: Promise<LateAnswer | undefined>,
  leaseMs: number,
  log: FastifyRequest['log'],
  storedAnswer?: (answer: unknown) => unknown,
): Promise<void> {
  const renew = () =>
    orm.em.fork().execute(
      `update idempotency_keys set locked_until = now() + (? * interval '1 millisecond')
          where tenant_id = ? and key = ? and claim_token = ? and state = 'processing'`,
      [leaseMs, claim.tenantId, claim.key, claim.token],
    );
  await renew();
  // Every call a handler makes is bounded (deadlines, provider timeouts), so it finishes; should
  // one not, the claim is renewed for five minutes at most, then its lease lets a retry take over.
  const holdUntil = Date.now() + MAX_LATE_HOLD_MS;
  const renewal = setInterval(
    () => {
      if (Date.now() > holdUntil) clearInterval(renewal);
      else void renew().catch(() => undefined);
    },
    Math.max(leaseMs / 2, 1_000),
  );
  renewal.unref();
  void late
    .then(async (answer) => {
      clearInterval(renewal);
      if (answer && answer.status < 500) {
        const body = answer.payload === undefined ? null : JSON.stringify(answer.payload);
        await settle(orm, claim, answer.status, body, storedAnswer);
      } else {
        await settle(orm, claim, 500, null);
      }
    })
    .catch((error: unknown) => {
      clearInterval(renewal);
      log.warn({ err: error }, 'late answer not recorded; the claim is released by its lease');
    });
}
