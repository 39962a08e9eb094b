// Idempotency-Key (IETF draft semantics, decisions §4) for POST endpoints: the first response to
// a key is stored for 24 hours and replayed for a repeat with the same body; the same key with a
// different body → 422 idempotency_key_reused; a repeat while the first is still being processed
// → 409 idempotency_key_in_use. 5xx answers are not stored, so the client may retry them.
import { createHash } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { MikroORM } from '@mikro-orm/postgresql';
import { ApiError, envelopeStyleFor, renderError } from './errors.ts';
import { toApiError } from './error-handler.ts';

export const IDEMPOTENCY_TTL_HOURS = 24;

export interface HandlerResult {
  status: number;
  body: unknown;
}

/** JSON with object keys sorted, so that the same content always hashes the same. */
export function canonicalJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonicalJson).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonicalJson(v)}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

export function sha256(text: string): string {
  return createHash('sha256').update(text).digest('hex');
}

export async function withIdempotency(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: { orm: MikroORM; tenantId: string },
  run: () => Promise<HandlerResult>,
): Promise<FastifyReply> {
  const header = request.headers['idempotency-key'];
  const key = Array.isArray(header) ? header[0] : header;
  if (key === undefined) {
    const result = await run();
    return reply.status(result.status).send(result.body);
  }
  if (key.length < 1 || key.length > 255) {
    throw ApiError.validation([{ path: 'Idempotency-Key', message: 'must be 1 to 255 characters' }]);
  }
  const path = request.url.split('?')[0] ?? request.url;
  const requestHash = sha256(`${request.method} ${path}\n${canonicalJson(request.body ?? null)}`);
  const em = deps.orm.em.fork();

  const claim = async () =>
    em.execute<{ key: string }[]>(
      `insert into idempotency_keys (tenant_id, key, method, path, request_hash, state, expires_at)
       values (?, ?, ?, ?, ?, 'processing', now() + (? * interval '1 hour'))
       on conflict (tenant_id, key) do nothing returning key`,
      [deps.tenantId, key, request.method, path, requestHash, IDEMPOTENCY_TTL_HOURS],
    );
  let claimed = await claim();
  if (claimed.length === 0) {
    // An expired record is as good as none.
    await em.execute('delete from idempotency_keys where tenant_id = ? and key = ? and expires_at <= now()', [
      deps.tenantId,
      key,
    ]);
    claimed = await claim();
  }
  if (claimed.length === 0) {
    const [stored] = await em.execute<
      { request_hash: string; state: string; response_status: number | null; response_body: unknown }[]
    >(
      'select request_hash, state, response_status, response_body from idempotency_keys where tenant_id = ? and key = ?',
      [deps.tenantId, key],
    );
    if (!stored) throw new ApiError('idempotency_key_in_use', 'this Idempotency-Key is being processed; retry shortly');
    if (stored.request_hash !== requestHash) {
      throw new ApiError(
        'idempotency_key_reused',
        'this Idempotency-Key was already used with a different request body or endpoint',
      );
    }
    if (stored.state !== 'completed') {
      throw new ApiError('idempotency_key_in_use', 'a request with this Idempotency-Key is still being processed');
    }
    return reply
      .status(stored.response_status ?? 200)
      .header('idempotent-replayed', 'true')
      .send(stored.response_body);
  }

  let result: HandlerResult;
  try {
    result = await run();
  } catch (error) {
    const apiError = toApiError(error);
    if (apiError.status >= 500) {
      await em.execute('delete from idempotency_keys where tenant_id = ? and key = ?', [deps.tenantId, key]);
      throw error;
    }
    result = {
      status: apiError.status,
      body: renderError(apiError, envelopeStyleFor(path), { path, method: request.method }),
    };
  }
  await em.execute(
    `update idempotency_keys set state = 'completed', response_status = ?, response_body = ? where tenant_id = ? and key = ?`,
    [result.status, JSON.stringify(result.body), deps.tenantId, key],
  );
  return reply.status(result.status).send(result.body);
}
