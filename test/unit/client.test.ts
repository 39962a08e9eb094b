// The typed client (src/client/) without a gateway: its error union read from each envelope, the
// Idempotency-Key it adds to POSTs, pagination over both page shapes, a network failure, and
// verifyWebhook against the gateway's own signer. The same client against the real stack:
// test/integration/client.test.ts.
import { randomBytes } from 'node:crypto';
import { describe, expect, expectTypeOf, it } from 'vitest';
import {
  type GatewayError,
  GatewayClientError,
  RESOURCE_ERROR_CODES,
  TRANSFER_ERROR_CODES,
  WebhookVerificationError,
  createGatewayClient,
  unwrap,
  verifyWebhook,
} from '../../src/client/index.ts';
import { ERRORS } from '../../src/http/errors.ts';
import { webhookHeaders } from '../../src/webhooks/signing.ts';
import { freePort } from '../support/ports.ts';

const BASE = 'http://gateway.test';

/** A fetch that answers from `answer` and keeps every request it was given. */
function recordingFetch(answer: (request: Request) => Response | Promise<Response>) {
  const requests: Request[] = [];
  return {
    requests,
    fetch: async (request: Request) => {
      requests.push(request.clone());
      return answer(request);
    },
  };
}

const json = (status: number, body: unknown, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });

describe('error codes', () => {
  it("are the gateway's table, in each envelope style", () => {
    const table = Object.values(ERRORS);
    expect([...RESOURCE_ERROR_CODES].sort()).toEqual([...new Set(table.map((entry) => entry.resource))].sort());
    expect([...TRANSFER_ERROR_CODES].sort()).toEqual([...new Set(table.map((entry) => entry.transfer))].sort());
  });
});

describe('errors', () => {
  const transferRefusal = {
    success: false,
    error: { code: 'insufficient_balance', message: 'not enough', status: 422, details: { required: 101_000 } },
  };
  const resourceRefusal = {
    error: { code: 'NOT_FOUND', message: 'card not found', details: null },
    meta: { path: '/api/v1/cards/x', method: 'GET', requestId: 'req_1' },
  };

  it('reads a transfer-style refusal, its request id from the header', async () => {
    const { fetch } = recordingFetch(() => json(422, transferRefusal, { 'x-request-id': 'req_t' }));
    const client = createGatewayClient({ baseUrl: BASE, apiKey: 'sk_test_x', fetch });
    const { data, error, response } = await client.POST('/api/v1/transfers', {
      body: { amount_minor: 100_000, recipient_account: '0123456789', recipient_bank_code: '058', narration: 'n' },
    });
    expect(data).toBeUndefined();
    expect(response?.status).toBe(422);
    expect(error).toEqual({
      kind: 'transfer',
      status: 422,
      code: 'insufficient_balance',
      message: 'not enough',
      details: { required: 101_000 },
      requestId: 'req_t',
    });
  });

  it('reads a resource-style refusal with its meta, and Retry-After', async () => {
    const { fetch } = recordingFetch(() =>
      json(
        503,
        { ...resourceRefusal, error: { ...resourceRefusal.error, code: 'UNAVAILABLE' } },
        { 'retry-after': '2' },
      ),
    );
    const client = createGatewayClient({ baseUrl: BASE, apiKey: 'sk_test_x', fetch });
    const { error } = await client.GET('/api/v1/cards/{card_id}', { params: { path: { card_id: 'x' } } });
    expect(error).toEqual({
      kind: 'resource',
      status: 503,
      code: 'UNAVAILABLE',
      message: 'card not found',
      details: null,
      requestId: 'req_1',
      path: '/api/v1/cards/x',
      method: 'GET',
      retryAfter: 2,
    });
  });

  it('calls an answer in neither envelope unexpected, keeping its body', async () => {
    const { fetch } = recordingFetch(() => new Response('<h1>Bad gateway</h1>', { status: 502 }));
    const client = createGatewayClient({ baseUrl: BASE, apiKey: 'sk_test_x', fetch });
    const { error } = await client.GET('/api/v1/wallet');
    expect(error).toEqual({
      kind: 'unexpected',
      status: 502,
      code: 'unexpected_response',
      message: "HTTP 502 in neither of the gateway's error envelopes",
      body: '<h1>Bad gateway</h1>',
      requestId: undefined,
    });
  });

  it('resolves a connection refused as a network error, with no response', async () => {
    // A free port: nothing listens there.
    const client = createGatewayClient({ baseUrl: `http://127.0.0.1:${await freePort()}`, apiKey: 'sk_test_x' });
    const { data, error, response } = await client.GET('/api/v1/wallet');
    expect([data, response]).toEqual([undefined, undefined]);
    expect(error).toMatchObject({ kind: 'network', status: undefined, code: 'network_error' });
    expect(error?.message).toMatch(/^fetch failed: .*ECONNREFUSED/);
  });

  it('unwrap gives the data, or throws GatewayClientError holding the error', async () => {
    const wallet = { currency: 'NGN', available_minor: 5, pending_minor: 0, updated_at: 'now' };
    let status = 200;
    const { fetch } = recordingFetch(() =>
      status === 200 ? json(200, { data: wallet, meta: resourceRefusal.meta }) : json(status, resourceRefusal),
    );
    const client = createGatewayClient({ baseUrl: BASE, apiKey: 'sk_test_x', fetch });
    expect(unwrap(await client.GET('/api/v1/wallet')).data).toEqual(wallet);
    status = 404;
    const thrown = await client
      .GET('/api/v1/wallet')
      .then(unwrap)
      .catch((failure: unknown) => failure);
    expect(thrown).toBeInstanceOf(Error);
    expect(thrown).toBeInstanceOf(GatewayClientError);
    expect((thrown as GatewayClientError).message).toBe('404 NOT_FOUND: card not found');
    expect((thrown as GatewayClientError).error).toMatchObject({ kind: 'resource', code: 'NOT_FOUND' });
  });

  it('types the union so that each variant keeps its own fields', () => {
    expectTypeOf<Extract<GatewayError, { kind: 'resource' }>['details']>().toEqualTypeOf<Record<
      string,
      unknown
    > | null>();
    expectTypeOf<Extract<GatewayError, { kind: 'transfer' }>['requestId']>().toEqualTypeOf<string | undefined>();
    expectTypeOf<Extract<GatewayError, { kind: 'network' }>['status']>().toEqualTypeOf<undefined>();
  });
});

describe('Idempotency-Key', () => {
  const created = () => json(201, { data: { id: 'va_1' }, meta: { timestamp: 't', requestId: 'r' } });
  const body = { customer_id: 'c', account_name: 'Ada Obi' };

  it('is a fresh UUID on every POST, none on a GET, and the one a call gives is kept', async () => {
    const { fetch, requests } = recordingFetch(created);
    const client = createGatewayClient({ baseUrl: BASE, apiKey: 'sk_test_k', fetch });
    await client.POST('/api/v1/virtual-accounts', { body });
    await client.POST('/api/v1/virtual-accounts', { body });
    await client.POST('/api/v1/virtual-accounts', { body, headers: { 'Idempotency-Key': 'mine-1' } });
    await client.GET('/api/v1/virtual-accounts');
    const keys = requests.map((request) => request.headers.get('idempotency-key'));
    expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(keys[1]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys[1]).not.toBe(keys[0]);
    expect(keys.slice(2)).toEqual(['mine-1', null]);
    expect(requests.map((request) => request.headers.get('authorization'))).toEqual(Array(4).fill('Bearer sk_test_k'));
    expect(await requests[0]!.json()).toEqual(body);
  });

  it('comes from the given generator, or is left out with idempotencyKey: false', async () => {
    const { fetch, requests } = recordingFetch(created);
    let n = 0;
    const numbered = createGatewayClient({ baseUrl: BASE, apiKey: 'k', fetch, idempotencyKey: () => `k-${++n}` });
    const none = createGatewayClient({ baseUrl: BASE, apiKey: 'k', fetch, idempotencyKey: false });
    await numbered.POST('/api/v1/virtual-accounts', { body });
    await none.POST('/api/v1/virtual-accounts', { body });
    await numbered.POST('/api/v1/virtual-accounts', { body });
    expect(requests.map((request) => request.headers.get('idempotency-key'))).toEqual(['k-1', null, 'k-2']);
  });
});

describe('paginate', () => {
  /** `total` items of ids `item-1…`, answered page by page in the shape `transferStyle` picks. */
  function pagedFetch(total: number, transferStyle: boolean) {
    return recordingFetch((request) => {
      const query = new URL(request.url).searchParams;
      const page = Number(query.get('page'));
      const limit = Number(query.get('limit') ?? 20);
      const items = Array.from({ length: total }, (_, i) => ({ id: `item-${i + 1}` })).slice(
        (page - 1) * limit,
        page * limit,
      );
      const pages = Math.ceil(total / limit);
      return transferStyle
        ? json(200, { status: 'success', data: items, pagination: { page, limit, total, totalPages: pages } })
        : json(200, {
            data: {
              items,
              pagination: { page, limit, offset: (page - 1) * limit, total, pages, has_more: page * limit < total },
            },
            meta: { timestamp: 't', requestId: 'r' },
          });
    });
  }

  it('walks the transfers list page by page until the last, keeping the filters', async () => {
    const { fetch, requests } = pagedFetch(7, true);
    const client = createGatewayClient({ baseUrl: BASE, apiKey: 'k', fetch });
    const ids: string[] = [];
    for await (const transfer of client.paginate('/api/v1/transfers', {
      params: { query: { limit: 3, status: 'successful' } },
    })) {
      expectTypeOf(transfer.status).toEqualTypeOf<'pending' | 'successful' | 'failed'>();
      ids.push(transfer.id);
    }
    expect(ids).toEqual(['item-1', 'item-2', 'item-3', 'item-4', 'item-5', 'item-6', 'item-7']);
    expect(requests.map((request) => new URL(request.url).search)).toEqual([
      '?limit=3&status=successful&page=1',
      '?limit=3&status=successful&page=2',
      '?limit=3&status=successful&page=3',
    ]);
  });

  it('walks a resource list by has_more, from the page given', async () => {
    const { fetch, requests } = pagedFetch(5, false);
    const client = createGatewayClient({ baseUrl: BASE, apiKey: 'k', fetch });
    const ids: string[] = [];
    for await (const account of client.paginate('/api/v1/virtual-accounts', {
      params: { query: { limit: 2, page: 2 } },
    }))
      ids.push(account.id);
    expect(ids).toEqual(['item-3', 'item-4', 'item-5']);
    expect(requests).toHaveLength(2);
  });

  it('asks once for an empty list, and refuses an offset', async () => {
    const { fetch, requests } = pagedFetch(0, false);
    const client = createGatewayClient({ baseUrl: BASE, apiKey: 'k', fetch });
    const all = [];
    for await (const endpoint of client.paginate('/api/v1/webhook-endpoints')) all.push(endpoint);
    expect([all, requests.length]).toEqual([[], 1]);
    await expect(client.paginate('/api/v1/events', { params: { query: { offset: 20 } } }).next()).rejects.toThrow(
      TypeError,
    );
  });

  it('throws GatewayClientError when a page is refused', async () => {
    const { fetch } = recordingFetch(() =>
      json(400, {
        success: false,
        error: { code: 'validation_error', message: 'page: too deep', status: 400 },
      }),
    );
    const client = createGatewayClient({ baseUrl: BASE, apiKey: 'k', fetch });
    const walk = client.paginate('/api/v1/transfers/bulk/{id}/items', { params: { path: { id: 'b' } } });
    await expect(walk.next()).rejects.toMatchObject({
      name: 'GatewayClientError',
      error: { kind: 'transfer', status: 400, code: 'validation_error' },
    });
  });
});

describe('verifyWebhook', () => {
  const secret = `whsec_${randomBytes(32).toString('base64')}`;
  const event = { id: 'evt_1', type: 'transfer.settled', created_at: '2026-11-27T10:00:00.000Z', data: { id: 't' } };
  const body = JSON.stringify(event);
  const now = () => Math.floor(Date.now() / 1000);

  it("returns the event of a delivery signed as the gateway signs, from Node's or fetch's headers", () => {
    const headers = webhookHeaders(secret, event.id, now(), body);
    const verified = verifyWebhook(body, headers, secret);
    expect(verified).toEqual(event);
    expectTypeOf(verified.type).toExtend<string>();
    expect(verifyWebhook(Buffer.from(body), new Headers(headers), secret)).toEqual(event);
    // A secret without whsec_ signs with its own bytes.
    const plain = 'plain-text-secret-of-our-tenant';
    expect(verifyWebhook(body, webhookHeaders(plain, event.id, now(), body), plain)).toEqual(event);
  });

  interface Sent {
    headers: Record<string, string>;
    body: string;
    secret?: string;
  }
  const cases: [what: string, reason: string, change: (headers: Record<string, string>) => Sent][] = [
    ['a tampered body', 'signature', (headers) => ({ headers, body: body.replace('"t"', '"u"') })],
    ['another secret', 'signature', (headers) => ({ headers, body, secret: `whsec_${'A'.repeat(44)}` })],
    ['a missing signature', 'missing_headers', ({ 'webhook-signature': _dropped, ...headers }) => ({ headers, body })],
    [
      'a capture replayed ten minutes later',
      'timestamp',
      () => ({ headers: webhookHeaders(secret, event.id, now() - 600, body), body }),
    ],
  ];
  it.each(cases)('refuses %s (%s)', (_what, reason, change) => {
    const sent = change(webhookHeaders(secret, event.id, now(), body));
    let thrown: unknown;
    try {
      verifyWebhook(sent.body, sent.headers, sent.secret ?? secret);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(WebhookVerificationError);
    expect((thrown as WebhookVerificationError).reason).toBe(reason);
  });

  it('refuses a signed body that is not an event', () => {
    const signed = '{"hello":"world"}';
    expect(() => verifyWebhook(signed, webhookHeaders(secret, 'x', now(), signed), secret)).toThrow(
      expect.objectContaining({ reason: 'body' }),
    );
  });
});
