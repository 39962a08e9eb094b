// What the API writes down (decisions §16): its log lines never hold an API key, a signing secret
// or a full account number (query strings included: account numbers show their last 4 digits), and
// the idempotency record of a request keeps a keyed fingerprint, never a plain digest of a body
// that held a secret. Checked on the real stack, on the app's own captured log lines and on every
// row of its database.
import { randomUUID } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { idempotencyFingerprintKey, requestFingerprint } from '../../src/http/idempotency.ts';
import { canonicalJson, sha256 } from '../../src/lib/canonical.ts';
import { auth, newSigningSecret, registerEndpoint, transferBody } from '../support/api.ts';
import { TEST_WEBHOOK_KEY, createFundedTenant } from '../support/app.ts';
import { everyRow, expectFoundNowhere, expectIdempotencyRecordKeepsNoSecret } from '../support/secrecy.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `log-secrecy-${process.pid}`;

let stack: GatewayStack;
useGatewayStack({ taskQueue: TASK_QUEUE }, (started) => (stack = started));

/** The app's log lines written while `run` ran, each as it was written (JSON), `time` left out. */
async function linesDuring(run: () => Promise<void>): Promise<Record<string, unknown>[]> {
  const from = stack.gateway.logs.length;
  await run();
  return stack.gateway.logs.slice(from).map(({ time: _time, ...line }) => line);
}

const text = (lines: Record<string, unknown>[]) => lines.map((line) => JSON.stringify(line)).join('\n');
const requestLines = (lines: Record<string, unknown>[]) =>
  lines.filter((line) => line.msg === 'request completed').map((line) => (line.req as { url: string }).url);

describe('account numbers in the logs', () => {
  it('shows a resolved account number by its last 4 digits, in the request line and in a refusal', async () => {
    const tenant = await createFundedTenant(stack.db.orm);
    const lines = await linesDuring(async () => {
      const found = await stack.app.inject({
        method: 'GET',
        url: '/api/v1/banks/resolve?bank_code=058&account_number=0123456789',
        headers: auth(tenant.apiKey),
      });
      // The answer is the tenant's own: it holds the number.
      expect([found.statusCode, found.json().data.account_number]).toEqual([200, '0123456789']);
      const encoded = await stack.app.inject({
        method: 'GET',
        url: '/api/v1/banks/resolve?account_number=%30123456789&bank_code=058',
        headers: auth(tenant.apiKey),
      });
      expect(encoded.statusCode).toBe(200);
      const missing = await stack.app.inject({
        method: 'GET',
        url: '/api/v1/banks/resolve?bank_code=058&account_number=0000000000',
        headers: auth(tenant.apiKey),
      });
      expect([missing.statusCode, missing.json().error.code]).toEqual([422, 'INVALID_ACCOUNT']);
    });
    expect(requestLines(lines)).toEqual([
      '/api/v1/banks/resolve?bank_code=058&account_number=******6789',
      '/api/v1/banks/resolve?account_number=******6789&bank_code=058',
      '/api/v1/banks/resolve?bank_code=058&account_number=******0000',
    ]);
    expect(lines.find((line) => line.msg === 'request refused')).toMatchObject({
      code: 'account_not_found',
      message: expect.stringContaining('no account ******0000 at'),
    });
    expect(text(lines)).not.toMatch(/0123456789|0000000000/);
    expect(text(lines)).not.toContain(tenant.apiKey);
  });

  it('shows a transfer recipient by its last 4 digits, accepted or refused, and no key or body', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 10_000_000);
    const reference = `log-${randomUUID()}`;
    const lines = await linesDuring(async () => {
      const created = await stack.app.inject({
        method: 'POST',
        url: '/api/v1/transfers',
        headers: auth(tenant.apiKey),
        payload: transferBody('logged', { reference }),
      });
      expect(created.statusCode).toBe(201);
      const refused = await stack.app.inject({
        method: 'POST',
        url: '/api/v1/transfers',
        headers: auth(tenant.apiKey),
        payload: transferBody('refused', { reference: `${reference}-x`, recipient_account: '0000000000' }),
      });
      expect([refused.statusCode, refused.json().error.code]).toEqual([422, 'invalid_account']);
      const listed = await stack.app.inject({
        method: 'GET',
        url: `/api/v1/transfers?reference=${reference}&api_key=${tenant.apiKey}`,
        headers: auth(tenant.apiKey),
      });
      expect(listed.statusCode).toBe(200);
    });
    // The tenant's requests (the bank's callback about the transfer may land in the same window).
    expect(requestLines(lines).filter((url) => url.startsWith('/api/'))).toEqual([
      '/api/v1/transfers',
      '/api/v1/transfers',
      `/api/v1/transfers?reference=${reference}&api_key=sk_test_***`,
    ]);
    expect(lines.find((line) => line.msg === 'request refused')).toMatchObject({
      code: 'invalid_account',
      message: expect.stringContaining('******0000'),
    });
    expect(text(lines)).not.toMatch(/0123456789|0000000000/);
    expect(text(lines)).not.toContain(tenant.apiKey.slice('sk_test_'.length));
  });
});

describe('a webhook signing secret', () => {
  it('is in no log line and in no row, nor any plain SHA-256 of it or of the request; the record still replays', async () => {
    const tenant = await createFundedTenant(stack.db.orm);
    const secret = newSigningSecret();
    const key = `hook-${randomUUID()}`;
    const path = '/api/v1/webhook-endpoints';
    const body = { url: 'http://127.0.0.1:9/hooks', events: ['transfer.settled'], signing_secret: secret };
    const register = (payload: Record<string, unknown>) =>
      stack.app.inject({
        method: 'POST',
        url: path,
        headers: auth(tenant.apiKey, { 'idempotency-key': key }),
        payload,
      });
    const lines = await linesDuring(async () => {
      const created = await register(body);
      expect(created.statusCode).toBe(201);
      // The same body again: the first answer, replayed; another secret under the key: 422.
      const replayed = await register(body);
      expect([replayed.statusCode, replayed.headers['idempotent-replayed'], replayed.json().data.id]).toEqual([
        200,
        'true',
        created.json().data.id,
      ]);
      const reused = await register({ ...body, signing_secret: newSigningSecret() });
      expect([reused.statusCode, reused.json().error.code]).toEqual([422, 'IDEMPOTENCY_KEY_REUSED']);
      // Without a key, too: the secret is never written down.
      expect(
        (await registerEndpoint(stack.app, tenant.apiKey, { ...body, url: 'http://127.0.0.1:9/other' })).statusCode,
      ).toBe(201);
    });

    const [record] = await stack.db.orm.em
      .fork()
      .execute<{ request_hash: string }[]>('select request_hash from idempotency_keys where key = ?', [key]);
    // The fingerprint is HMAC-SHA256 under the key derived from WEBHOOK_ENCRYPTION_KEY…
    expect(record!.request_hash).toBe(
      requestFingerprint(idempotencyFingerprintKey(TEST_WEBHOOK_KEY), 'POST', path, body),
    );
    await expectIdempotencyRecordKeepsNoSecret(stack.db.orm, key, { method: 'POST', path, body }, secret);
    // …and nothing a dump holds is the secret, its key bytes, or a plain digest to try guesses against.
    const keyBytes = secret.slice('whsec_'.length);
    expectFoundNowhere(
      { database: (await everyRow(stack.db.orm)).join('\n'), logs: text(lines) },
      {
        secret,
        'its key bytes': keyBytes,
        'SHA-256 of the secret': sha256(secret),
        'SHA-256 of its key bytes': sha256(keyBytes),
        'SHA-256 of the request': sha256(`POST ${path}\n${canonicalJson(body)}`),
        'SHA-256 of the body': sha256(canonicalJson(body)),
        'the API key': tenant.apiKey,
      },
    );
  });
});
