// The Paystack reference derived from ours, and the connector's settings: pure, table-driven.
import { describe, expect, it } from 'vitest';
import { PAYSTACK_REFERENCE, ourReference, paystackReference } from '../../src/connectors/paystack/reference.ts';
import { paystackConnector } from '../../src/connectors/paystack/index.ts';
import { customerEmail, customerNames } from '../../src/connectors/paystack/virtual-accounts.ts';

describe('paystackReference', () => {
  it('keeps a transfer id (a lowercase UUID) as it is, and reads it back', () => {
    const id = '0b6f3c52-9a41-4d7e-8f0a-1c2d3e4f5a6b';
    expect(paystackReference(id)).toBe(id);
    expect(ourReference(paystackReference(id))).toBe(id);
  });

  it('lowercases an uppercase UUID: the same id, within the rules', () => {
    expect(paystackReference('0B6F3C52-9A41-4D7E-8F0A-1C2D3E4F5A6B')).toBe('0b6f3c52-9a41-4d7e-8f0a-1c2d3e4f5a6b');
  });

  it('keeps any reference already within the rules', () => {
    expect(paystackReference('payout_2025-03-14_0001')).toBe('payout_2025-03-14_0001');
  });

  it.each([
    ['too short', 'abc-123'],
    ['too long', 'a'.repeat(51)],
    ['uppercase letters', 'Payout-2025-03-14-0001'],
    ['a dot', 'payout.2025.03.14.0001'],
    ['a space', 'payout 2025 03 14 0001'],
    ['non-ASCII', 'paiement-été-2025-0001'],
    ['a NUL', 'payout-2025-03-14\u00000001'],
    ['empty', ''],
    ['our digest prefix', 'gwd_0123456789abcdef0123'],
  ])('replaces a reference with %s by a digest within the rules, the same every time', (_, ours) => {
    const derived = paystackReference(ours);
    expect(derived).toMatch(PAYSTACK_REFERENCE);
    expect(derived).toMatch(/^gwd_[0-9a-f]{40}$/);
    expect(paystackReference(ours)).toBe(derived);
    expect(ourReference(derived)).toBeNull();
  });

  it('never makes two of ours one at Paystack by dropping case or characters', () => {
    const pairs = [
      ['Payout-2025-03-14-0001', 'payout-2025-03-14-0001'],
      ['payout.2025.03.14.0001', 'payout_2025_03_14_0001'],
    ];
    for (const [a, b] of pairs) expect(paystackReference(a!)).not.toBe(paystackReference(b!));
  });
});

describe('paystack settings', () => {
  const key = 'sk_live_0123456789abcdef0123456789abcdef';

  it('reads the key and defaults the base URL', () => {
    expect(paystackConnector.settings.parse({ PAYSTACK_SECRET_KEY: key, OTHER: 'x' })).toEqual({
      secretKey: key,
      baseUrl: 'https://api.paystack.co',
    });
    expect(
      paystackConnector.settings.parse({
        PAYSTACK_SECRET_KEY: 'sk_test_abc123',
        PAYSTACK_BASE_URL: 'http://127.0.0.1:9',
      }),
    ).toEqual({ secretKey: 'sk_test_abc123', baseUrl: 'http://127.0.0.1:9' });
  });

  it.each([
    [{}, 'PAYSTACK_SECRET_KEY is required'],
    [{ PAYSTACK_SECRET_KEY: 'pk_live_0123456789abcdef' }, 'PAYSTACK_SECRET_KEY must be a Paystack secret key'],
    [{ PAYSTACK_SECRET_KEY: 'sk_live_!!' }, 'PAYSTACK_SECRET_KEY must be a Paystack secret key'],
    [{ PAYSTACK_SECRET_KEY: 'sk_live_abc def' }, 'PAYSTACK_SECRET_KEY must be a Paystack secret key'],
    [
      { PAYSTACK_SECRET_KEY: key, PAYSTACK_BASE_URL: 'ftp://api.paystack.co' },
      'PAYSTACK_BASE_URL must be an http(s) URL',
    ],
    [{ PAYSTACK_SECRET_KEY: key, PAYSTACK_BASE_URL: 'not a url' }, 'PAYSTACK_BASE_URL must be an http(s) URL'],
    [
      { PAYSTACK_SECRET_KEY: key, PAYSTACK_BASE_URL: 'https://u:p@api.paystack.co' },
      'PAYSTACK_BASE_URL must be an http(s) URL',
    ],
  ])('refuses %j, naming the variable and never the value', (env, message) => {
    const result = paystackConnector.settings.safeParse(env);
    expect(result.success).toBe(false);
    const text = result.error!.issues.map((issue) => issue.message).join('; ');
    expect(text).toContain(message);
    for (const value of Object.values(env)) expect(text).not.toContain(value);
  });

  it('builds a live connector serving transfers and dedicated accounts', () => {
    const connector = paystackConnector.create(
      { secretKey: key, baseUrl: 'https://api.paystack.co' },
      { timeoutMs: 300 },
    );
    expect(connector.name).toBe('paystack');
    expect(connector.modes).toEqual(['live']);
    expect(connector.capabilities).toEqual(['transfers', 'virtual_accounts']);
    expect(connector.transfers?.name).toBe('paystack');
    expect(connector.virtualAccounts?.map((route) => ({ ...route, provider: route.provider.name }))).toEqual([
      { provider: 'paystack', countries: ['NG'], currencies: ['NGN'], supportsPreferredBank: true },
    ]);
    expect(JSON.stringify(connector)).not.toContain(key);
  });
});

describe('dedicated-account customers', () => {
  it('derives the email from our reference and the names from the account name', () => {
    expect(customerEmail('5D1E8A4C-0000-4000-8000-000000000001')).toBe(
      'va-5d1e8a4c-0000-4000-8000-000000000001@paystack-dva.gateway.invalid',
    );
    expect(customerNames('  Ada   Obi Nwosu ')).toEqual({ first_name: 'Ada', last_name: 'Obi Nwosu' });
    expect(customerNames('Acme')).toEqual({ first_name: 'Acme', last_name: 'Acme' });
  });
});
