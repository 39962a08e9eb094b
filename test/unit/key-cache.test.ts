// The API key cache (src/tenants/key-cache.ts) on a clock the test moves: a key is remembered for
// at most its time to live, so a revocation is honoured within it; only keys that resolved are
// kept; the least recently used key goes past the bound; concurrent misses share one lookup.
import { describe, expect, it } from 'vitest';
import { ApiKeyCache } from '../../src/tenants/key-cache.ts';
import type { KeyResolution } from '../../src/tenants/tenants.ts';

const resolved = (keyId: string): KeyResolution => ({
  ok: true,
  key: {
    keyId,
    mode: 'test',
    tenantId: `tenant-of-${keyId}`,
    tenantName: 'Acme',
    features: [],
    dailyTransferLimitMinor: 0,
    allowedAccountTypes: [],
    keyName: 'default',
    scopes: ['*'],
    allowedIps: [],
    liveKeysNeedIpAllowList: false,
  },
});
const revoked: KeyResolution = { ok: false, reason: 'revoked' };

function cacheOnClock(options: { ttlMs?: number; maxEntries?: number } = {}) {
  const clock = { now: 0 };
  const cache = new ApiKeyCache({ ttlMs: options.ttlMs ?? 1_000, now: () => clock.now, ...options });
  const lookups: string[] = [];
  const answers = new Map<string, KeyResolution>();
  const resolve = (key: string) =>
    cache.resolve(key, async () => {
      lookups.push(key);
      return answers.get(key) ?? { ok: false, reason: 'unknown' };
    });
  return { cache, clock, lookups, answers, resolve };
}

describe('API key cache', () => {
  it('remembers a resolved key for less than its time to live, so a revocation counts within it', async () => {
    const { clock, lookups, answers, resolve } = cacheOnClock();
    answers.set('sk_test_a', resolved('a'));
    expect(await resolve('sk_test_a')).toEqual(resolved('a'));
    answers.set('sk_test_a', revoked);
    clock.now = 999;
    expect(await resolve('sk_test_a')).toEqual(resolved('a'));
    expect(lookups).toEqual(['sk_test_a']);
    clock.now = 1_000;
    expect(await resolve('sk_test_a')).toEqual(revoked);
    expect(await resolve('sk_test_a')).toEqual(revoked);
    expect(lookups).toEqual(['sk_test_a', 'sk_test_a', 'sk_test_a']);
  });

  it('keeps no unknown or revoked key and no failed lookup: each is looked up again', async () => {
    const { cache, lookups, answers, resolve } = cacheOnClock();
    answers.set('sk_test_gone', revoked);
    await resolve('sk_test_unknown');
    await resolve('sk_test_unknown');
    await resolve('sk_test_gone');
    await resolve('sk_test_gone');
    await expect(cache.resolve('sk_test_down', () => Promise.reject(new Error('database down')))).rejects.toThrow(
      'database down',
    );
    await expect(cache.resolve('sk_test_down', async () => resolved('down'))).resolves.toEqual(resolved('down'));
    expect(lookups).toEqual(['sk_test_unknown', 'sk_test_unknown', 'sk_test_gone', 'sk_test_gone']);
    expect(cache.size).toBe(1);
  });

  it('is bounded, letting the least recently used key go first', async () => {
    const { cache, lookups, answers, resolve } = cacheOnClock({ maxEntries: 3 });
    for (const key of ['sk_test_1', 'sk_test_2', 'sk_test_3', 'sk_test_4']) answers.set(key, resolved(key));
    await resolve('sk_test_1');
    await resolve('sk_test_2');
    await resolve('sk_test_3');
    await resolve('sk_test_1');
    await resolve('sk_test_4');
    expect(cache.size).toBe(3);
    lookups.length = 0;
    await resolve('sk_test_1');
    await resolve('sk_test_3');
    await resolve('sk_test_4');
    expect(lookups).toEqual([]);
    await resolve('sk_test_2');
    expect(lookups).toEqual(['sk_test_2']);
  });

  it('shares one lookup among concurrent requests with the same key', async () => {
    const { lookups, answers, resolve } = cacheOnClock();
    answers.set('sk_test_hot', resolved('hot'));
    const answersSeen = await Promise.all(Array.from({ length: 50 }, () => resolve('sk_test_hot')));
    expect(new Set(answersSeen.map((answer) => (answer.ok ? answer.key.keyId : answer.reason)))).toEqual(
      new Set(['hot']),
    );
    expect(lookups).toEqual(['sk_test_hot']);
  });

  it('looks every key up when its time to live is 0', async () => {
    const { cache, lookups, answers, resolve } = cacheOnClock({ ttlMs: 0 });
    answers.set('sk_test_a', resolved('a'));
    await resolve('sk_test_a');
    await resolve('sk_test_a');
    expect(lookups).toEqual(['sk_test_a', 'sk_test_a']);
    expect(cache.size).toBe(0);
  });
});
