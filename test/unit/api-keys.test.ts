import { describe, expect, it } from 'vitest';
import { generateApiKey, hashApiKey, keyPrefix, parseApiKey } from '../../src/tenants/api-keys.ts';
import { requestIdFor } from '../../src/http/request-id.ts';
import type { IncomingMessage } from 'node:http';

describe('API keys', () => {
  it('have the mode prefix and 40 random base62 characters', () => {
    const test = generateApiKey('test');
    const live = generateApiKey('live');
    expect(test).toMatch(/^sk_test_[A-Za-z0-9]{40}$/);
    expect(live).toMatch(/^sk_live_[A-Za-z0-9]{40}$/);
    const many = new Set(Array.from({ length: 1000 }, () => generateApiKey('test')));
    expect(many.size).toBe(1000);
  });

  it('hash to a stable SHA-256 that does not contain the key', () => {
    const key = 'sk_test_abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMN';
    expect(hashApiKey(key)).toBe(hashApiKey(key));
    expect(hashApiKey(key)).toMatch(/^[0-9a-f]{64}$/);
    expect(hashApiKey(key)).not.toBe(hashApiKey(`${key}x`));
    expect(keyPrefix(key)).toBe('sk_test_abcdefgh');
  });

  it('parse only well-formed keys', () => {
    expect(parseApiKey(`sk_test_${'a'.repeat(32)}`)).toBe('test');
    expect(parseApiKey(`sk_live_${'Z9'.repeat(20)}`)).toBe('live');
    expect(parseApiKey(`sk_test_${'a'.repeat(31)}`)).toBeUndefined();
    expect(parseApiKey(`pk_test_${'a'.repeat(40)}`)).toBeUndefined();
    expect(parseApiKey(`sk_prod_${'a'.repeat(40)}`)).toBeUndefined();
    expect(parseApiKey(`sk_test_${'a'.repeat(39)}!`)).toBeUndefined();
  });
});

describe('requestIdFor', () => {
  const withHeader = (value?: string) =>
    ({ headers: value === undefined ? {} : { 'x-request-id': value } }) as IncomingMessage;

  it('keeps a client id of 1 to 128 of [A-Za-z0-9._:-]', () => {
    expect(requestIdFor(withHeader('a'))).toBe('a');
    expect(requestIdFor(withHeader('Order-9.retry:2_x'))).toBe('Order-9.retry:2_x');
    expect(requestIdFor(withHeader('x'.repeat(128)))).toBe('x'.repeat(128));
  });

  it('makes one otherwise', () => {
    for (const value of [undefined, '', 'x'.repeat(129), 'white space', 'ünïcode', 'a/b']) {
      expect(requestIdFor(withHeader(value))).toMatch(/^req_[0-9a-f]{32}$/);
    }
  });
});
