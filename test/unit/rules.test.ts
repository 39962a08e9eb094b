// Pure rules, table-driven: webhook subscriptions, signatures, secrets, Retry-After, destinations,
// and the small helpers money paths rely on (the transfer domain's own: transfer-domain.test.ts).
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { retryAfterMs } from '../../activities/webhooks/webhooks.ts';
import { canonicalJson } from '../../src/lib/canonical.ts';
import { checkDestination, egressPolicyFor } from '../../src/webhooks/destinations.ts';
import { loadConfig } from '../../src/config.ts';
import { subscribes } from '../../src/events/event-types.ts';
import { deliveryIdFor } from '../../src/webhooks/store.ts';
import { decryptSecret, encryptSecret } from '../../src/webhooks/secrets.ts';
import { webhookHeaders } from '../../src/webhooks/signing.ts';
import { verifyWebhook } from '../../src/client/webhooks.ts';
import { isValidNuban, nuban } from '../../src/sandbox-bank/banks.ts';
import { meaningOf, submissionRefusal } from '../../src/connectors/codes.ts';
import { nextStatusCheckMs } from '../../workflows/transfers/transfer.ts';
import { MAX_PENDING_REPLAYS, queueReplay } from '../../workflows/webhooks/definitions.ts';

describe('webhook subscriptions', () => {
  it.each([
    [['transfer.settled'], 'transfer.settled', true],
    [['transfer.failed'], 'transfer.settled', false],
    [['*'], 'transfer.settled', true],
    [['*'], 'event.delivery.succeeded', false],
    [['*', 'event.delivery.failed'], 'event.delivery.failed', true],
  ] as const)('%j receives %s: %s', (subscribed, type, expected) => {
    expect(subscribes(subscribed, type)).toBe(expected);
  });
});

describe('webhook signatures', () => {
  it('verify with the standardwebhooks library, for whsec_ and raw secrets', () => {
    const body = JSON.stringify({ id: 'evt', type: 'transfer.settled', created_at: '2026-01-01T00:00:00Z', data: {} });
    const now = Math.floor(Date.now() / 1000);
    const whsec = `whsec_${Buffer.from('0123456789abcdef0123456789abcdef').toString('base64')}`;
    expect(new Webhook(whsec).verify(body, webhookHeaders(whsec, 'evt', now, body))).toMatchObject({ id: 'evt' });
    const raw = 'a-plain-secret-string';
    expect(new Webhook(raw, { format: 'raw' }).verify(body, webhookHeaders(raw, 'evt', now, body))).toMatchObject({
      id: 'evt',
    });
    const tampered = body.replace('transfer.settled', 'transfer.failed');
    expect(() => new Webhook(whsec).verify(tampered, webhookHeaders(whsec, 'evt', now, body))).toThrow();
  });

  it('carry one v1 signature per secret during a rotation, each verifying with the library and verifyWebhook unchanged', () => {
    const body = JSON.stringify({ id: 'evt', type: 'transfer.settled', created_at: '2026-01-01T00:00:00Z', data: {} });
    const now = Math.floor(Date.now() / 1000);
    const fresh = `whsec_${Buffer.from('fresh-secret-of-thirty-two-bytes').toString('base64')}`;
    const previous = 'the-plain-secret-it-replaced';
    const headers = webhookHeaders([fresh, previous], 'evt', now, body);
    const [first, second, ...more] = headers['webhook-signature']!.split(' ');
    expect(more).toEqual([]);
    expect(first).toBe(webhookHeaders(fresh, 'evt', now, body)['webhook-signature']);
    expect(second).toBe(webhookHeaders(previous, 'evt', now, body)['webhook-signature']);
    expect(new Webhook(fresh).verify(body, headers)).toMatchObject({ id: 'evt' });
    expect(new Webhook(previous, { format: 'raw' }).verify(body, headers)).toMatchObject({ id: 'evt' });
    expect(verifyWebhook(body, headers, fresh)).toMatchObject({ id: 'evt' });
    expect(verifyWebhook(body, headers, previous)).toMatchObject({ id: 'evt' });
    expect(() => verifyWebhook(body, headers, 'a-third-secret-never-used')).toThrow(/No matching signature/);
  });

  it('keep secrets encrypted at rest and readable only with the key', () => {
    const key = Buffer.alloc(32, 3);
    const stored = encryptSecret(key, 'whsec_top-secret');
    expect(stored).not.toContain('top-secret');
    expect(decryptSecret(key, stored)).toBe('whsec_top-secret');
    expect(() => decryptSecret(Buffer.alloc(32, 4), stored)).toThrow();
  });
});

describe('retryAfterMs', () => {
  it.each([
    ['5', 5_000],
    ['0', 0],
    [null, null],
    ['soon', null],
  ] as const)('%s → %s', (header, expected) => {
    expect(retryAfterMs(header)).toBe(expected);
  });

  it('reads an HTTP date', () => {
    const now = Date.parse('2026-11-22T12:00:00Z');
    expect(retryAfterMs('Sun, 22 Nov 2026 12:00:30 GMT', now)).toBe(30_000);
  });
});

describe('checkDestination', () => {
  const resolver = async (host: string) => (host === 'public.example' ? ['8.8.8.8'] : ['192.168.0.10']);
  it.each([
    ['https://public.example/hook', 'live', true],
    ['http://public.example/hook', 'live', false],
    ['https://private.example/hook', 'live', false],
    ['https://127.0.0.1/hook', 'live', false],
    ['https://[::ffff:7f00:1]/hook', 'live', false],
    ['https://017700000001/hook', 'live', false],
    ['https://user:pw@public.example/hook', 'live', false],
    ['http://127.0.0.1:4000/hook', 'test', true],
    ['http://[::1]:4000/hook', 'test', true],
    ['http://private.example/hook', 'test', false],
    ['ftp://public.example/hook', 'test', false],
  ] as const)('%s with a %s key → allowed: %s', async (url, mode, allowed) => {
    const result = await checkDestination(url, mode, { resolve: resolver }).then(
      () => true,
      () => false,
    );
    expect(result).toBe(allowed);
  });
});

describe('checkDestination with the deployment protected', () => {
  const protectedTargets = [
    { service: 'API', host: '127.0.0.1', port: 3000 },
    { service: 'sandbox bank', host: 'localhost', port: 4010 },
    { service: 'PostgreSQL', host: '0.0.0.0', port: 54329 },
  ];
  const resolve = async (host: string) => {
    if (host === 'localhost' || host === 'localhost.') return ['127.0.0.1', '::1'];
    throw new Error(`no such host ${host}`);
  };
  it.each([
    'http://127.0.0.1:3000/x',
    'http://localhost.:3000/x',
    'http://2130706433:4010/control/providers/nip/down',
    'http://0x7f.1:4010/',
    'http://0177.0.0.1:4010/',
    'http://127.1:4010/',
    'http://127.0.0.2:3000/',
    'http://[::1]:4010/',
    'http://[::ffff:127.0.0.1]:4010/',
    'http://[::ffff:7f00:1]:3000/',
    'http://0.0.0.0:3000/',
    'http://[::]:4010/',
    'http://127.0.0.1:54329/',
  ])('refuses %s with a sandbox key', async (url) => {
    await expect(checkDestination(url, 'test', { resolve, protectedTargets })).rejects.toThrow();
  });

  it('protects every service of a configuration as npm start hands it to the API (TEMPORAL_ADDRESS set)', async () => {
    const config = loadConfig({
      TEMPORAL_ADDRESS: '127.0.0.1:7233',
      DATABASE_URL: 'postgres://u:p@127.0.0.1:54329/gateway',
    });
    const policy = egressPolicyFor(config);
    for (const port of [3000, 4010, 7233, 8233, 7243, 54329]) {
      await expect(checkDestination(`http://127.0.0.1:${port}/`, 'test', { ...policy, resolve })).rejects.toThrow(
        /where this deployment's/,
      );
    }
    await expect(checkDestination('http://127.0.0.1:9000/', 'test', { ...policy, resolve })).resolves.toBeDefined();
    expect(egressPolicyFor(loadConfig({ NODE_ENV: 'test' })).allowLoopback).toBe(true);
    expect(egressPolicyFor(loadConfig({ WEBHOOK_ALLOW_LOOPBACK: 'false' })).allowLoopback).toBe(false);
  });

  it('allows loopback on another port, unless loopback is turned off', async () => {
    await expect(
      checkDestination('http://127.0.0.1:9000/hook', 'test', { resolve, protectedTargets }),
    ).resolves.toMatchObject({
      addresses: ['127.0.0.1'],
    });
    await expect(
      checkDestination('http://127.0.0.1:9000/hook', 'test', { resolve, protectedTargets, allowLoopback: false }),
    ).rejects.toThrow(/WEBHOOK_ALLOW_LOOPBACK/);
  });
});

describe('helpers', () => {
  it('derive the same delivery id for the same pair, and another for another', () => {
    const a = deliveryIdFor('e1', 'p1');
    expect(a).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-a[0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(deliveryIdFor('e1', 'p1')).toBe(a);
    expect(deliveryIdFor('e1', 'p2')).not.toBe(a);
  });

  it('hash request bodies regardless of key order', () => {
    expect(canonicalJson({ b: 1, a: { d: [1, 2], c: null } })).toBe(canonicalJson({ a: { c: null, d: [1, 2] }, b: 1 }));
    expect(canonicalJson({ a: 1 })).not.toBe(canonicalJson({ a: '1' }));
  });

  it('ask the bank after 15 s, 30 s, … then hourly, then every 6 h past a day', () => {
    expect([0, 1, 2, 3, 4, 5, 6].map((checks) => nextStatusCheckMs(checks, 0))).toEqual([
      15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000,
    ]);
    expect(nextStatusCheckMs(7, 3_600_000)).toBe(3_600_000);
    expect(nextStatusCheckMs(30, 24 * 3_600_000)).toBe(6 * 3_600_000);
  });

  it('make NUBANs whose check digit validates', () => {
    expect(nuban('035', 810_000_001)).toMatch(/^810000001\d$/);
    expect(isValidNuban('035', nuban('035', 810_000_001))).toBe(true);
    expect(isValidNuban('058', nuban('035', 810_000_001))).toBe(false);
  });

  it('map NIP codes to outcomes', () => {
    expect(meaningOf('00')).toEqual({ kind: 'status', status: 'successful' });
    expect(meaningOf('07')).toMatchObject({ kind: 'error', outcome: 'invalid_account', transient: false });
    expect(meaningOf('96')).toMatchObject({ kind: 'error', outcome: 'unavailable', transient: true });
    expect(meaningOf('Z9')).toMatchObject({ kind: 'error', outcome: 'unknown', transient: true });
  });

  it.each([
    [408, '07', 'timeout', true],
    [425, '57', 'unavailable', true],
    [429, '51', 'unavailable', true],
    [400, '07', 'invalid_account', false],
    [409, '57', 'transfer_failed', false],
    [422, '51', 'transfer_failed', false],
    [409, undefined, 'unknown', true],
    [400, 'XX', 'unknown', true],
    [404, '25', 'not_found', false],
    [400, '96', 'unavailable', true],
    [409, '00', 'unknown', true],
  ] as const)(
    'classify a submission answered HTTP %i with code %s as %s (transient: %s)',
    (status, code, outcome, transient) => {
      expect(submissionRefusal(status, code)).toMatchObject({ outcome, transient });
    },
  );
});

describe('queueReplay (a delivery workflow’s pending replays)', () => {
  it('keeps every replay in order up to the bound', () => {
    const pending: string[] = [];
    for (const id of ['r1', 'r2', 'r3']) queueReplay(pending, id, 3);
    expect(pending).toEqual(['r1', 'r2', 'r3']);
  });

  it('past the bound, the latest replay takes the newest pending place: the count stays at the bound', () => {
    const pending: string[] = [];
    for (let i = 1; i <= 10; i++) queueReplay(pending, `r${i}`, 3);
    expect(pending).toEqual(['r1', 'r2', 'r10']);
  });

  it('bounds a delivery’s pending replays at 1,000 by default (36 KB of ids at most)', () => {
    const pending: string[] = [];
    for (let i = 0; i < 5_000; i++) queueReplay(pending, `rpl_${String(i).padStart(32, '0')}`);
    expect(pending).toHaveLength(MAX_PENDING_REPLAYS);
    expect(MAX_PENDING_REPLAYS).toBe(1_000);
    expect(pending.at(-1)).toBe(`rpl_${String(4_999).padStart(32, '0')}`);
    expect(JSON.stringify(pending).length).toBeLessThan(40_000);
  });
});
