// The operator CLI run as an operator runs it: a separate process, JSON on stdout, a non-zero exit
// and a clear message on stderr for bad arguments.
import { describe, expect, it } from 'vitest';
import { postingsTotal, walletBalance } from '../../src/ledger/ledger.ts';
import { auth } from '../support/api.ts';
import { useTestApp } from '../support/app.ts';
import { createTestDatabase } from '../support/database.ts';
import { runAdmin } from '../support/cli.ts';
import { eventually } from '../support/eventually.ts';

const own = useTestApp();

const admin = (...args: string[]) => runAdmin({ DATABASE_URL: own.db.url }, ...args);

async function wallet(apiKey: string) {
  const response = await own.app.inject({
    method: 'GET',
    url: '/api/v1/wallet',
    headers: auth(apiKey),
  });
  return { status: response.statusCode, body: response.json() };
}

describe('admin CLI', () => {
  it('creates a tenant with a working key, funded wallet, limit and features', async () => {
    const result = await admin(
      'tenant',
      'create',
      '--name',
      'acme',
      '--wallet-minor',
      '10000000',
      '--daily-limit-minor',
      '500000000',
      '--feature',
      'identity_customers',
    );
    expect(result.code).toBe(0);
    expect(result.stdout.trim().split('\n')).toHaveLength(1);
    expect(result.json).toMatchObject({
      name: 'acme',
      features: ['identity_customers'],
      daily_transfer_limit_minor: 500_000_000,
      allowed_account_types: ['standard', 'dedicated', 'temporary'],
      mode: 'test',
      wallet: { currency: 'NGN', available_minor: 10_000_000, pending_minor: 0 },
    });
    expect(result.json.api_key).toMatch(/^sk_test_[A-Za-z0-9]{40}$/);
    expect(result.json.key_prefix).toBe(result.json.api_key.slice(0, 16));

    const seen = await wallet(result.json.api_key);
    expect(seen.status).toBe(200);
    expect(seen.body.data).toMatchObject({ currency: 'NGN', available_minor: 10_000_000, pending_minor: 0 });

    const [stored] = await own.db.orm.em
      .fork()
      .execute<{ key_hash: string }[]>('select key_hash from api_key_secrets where key_id = ?', [result.json.key_id]);
    expect(stored!.key_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(stored!.key_hash).not.toContain(result.json.api_key.slice(8));
  });

  it('defaults the daily limit to ₦5,000,000 and issues live keys with --live', async () => {
    const result = await admin('tenant', 'create', '--name', 'live co', '--live');
    expect(result.code).toBe(0);
    expect(result.json.daily_transfer_limit_minor).toBe(500_000_000);
    expect(result.json.api_key).toMatch(/^sk_live_[A-Za-z0-9]{40}$/);
    expect(result.json.wallet.available_minor).toBe(0);
  });

  it('funds a wallet through a balanced journal entry and prints the new balance', async () => {
    const created = await admin('tenant', 'create', '--name', 'funded', '--wallet-minor', '150');
    const topUp = () =>
      admin(
        'wallet',
        'fund',
        '--tenant',
        created.json.tenant_id,
        '--amount-minor',
        '2500050',
        '--reference',
        'topup-1',
      );
    const funded = await topUp();
    expect(funded.code).toBe(0);
    expect(funded.json).toMatchObject({
      amount_minor: 2_500_050,
      applied: true,
      wallet: { available_minor: 2_500_200 },
    });
    // The same reference funds once.
    const again = await topUp();
    expect(again.json).toMatchObject({ applied: false, wallet: { available_minor: 2_500_200 } });
    expect((await walletBalance(own.db.orm.em.fork(), created.json.tenant_id)).availableMinor).toBe(2_500_200);
    expect(await postingsTotal(own.db.orm.em.fork())).toBe(0);
  });

  it('updates limits and features', async () => {
    const created = await admin('tenant', 'create', '--name', 'flags');
    const updated = await admin(
      'tenant',
      'update',
      '--tenant',
      created.json.tenant_id,
      '--daily-limit-minor',
      '750000',
      '--feature',
      'identity_customers',
    );
    expect(updated.code).toBe(0);
    expect(updated.json).toMatchObject({ daily_transfer_limit_minor: 750_000, features: ['identity_customers'] });
    const removed = await admin(
      'tenant',
      'update',
      '--tenant',
      created.json.tenant_id,
      '--no-feature',
      'identity_customers',
    );
    expect(removed.json.features).toEqual([]);
    expect(removed.json.daily_transfer_limit_minor).toBe(750_000);
  });

  it('creates a second key and revokes a key by prefix', async () => {
    const created = await admin('tenant', 'create', '--name', 'keys');
    const second = await admin('key', 'create', '--tenant', created.json.tenant_id);
    expect(second.code).toBe(0);
    expect(second.json.api_key).toMatch(/^sk_test_/);
    expect((await wallet(second.json.api_key)).status).toBe(200);

    const revoked = await admin('key', 'revoke', '--key-prefix', created.json.key_prefix);
    expect(revoked.code).toBe(0);
    expect(revoked.json).toMatchObject({ key_id: created.json.key_id, tenant_id: created.json.tenant_id });
    expect((await wallet(created.json.api_key)).status).toBe(401);
    expect((await wallet(second.json.api_key)).status).toBe(200);
  });

  it('rolls keys: the new one works at once, the old ones of that mode until the overlap ends, then 401', async () => {
    const created = await admin('tenant', 'create', '--name', 'rolled');
    const tenantId = created.json.tenant_id as string;
    const second = await admin('key', 'create', '--tenant', tenantId);
    const live = await admin('key', 'create', '--tenant', tenantId, '--live');
    const before = Date.now();
    const rolled = await admin('key', 'roll', '--tenant', tenantId, '--expire-old-in', '8s');
    expect(rolled.code, rolled.stderr).toBe(0);
    expect(rolled.json).toMatchObject({
      tenant_id: tenantId,
      mode: 'test',
      api_key: expect.stringMatching(/^sk_test_/),
    });
    expect(rolled.json.expiring.map((key: { key_prefix: string }) => key.key_prefix).sort()).toEqual(
      [created.json.key_prefix, second.json.key_prefix].sort(),
    );
    for (const key of rolled.json.expiring as { expires_at: string }[]) {
      const at = Date.parse(key.expires_at);
      expect(at).toBeGreaterThanOrEqual(before + 8_000 - 1_000);
      expect(at).toBeLessThanOrEqual(Date.now() + 8_000 + 1_000);
    }
    // The overlap: old and new both work; then the old ones are refused, and the live key never expired.
    expect((await wallet(rolled.json.api_key)).status).toBe(200);
    expect((await wallet(created.json.api_key)).status).toBe(200);
    const refused = await eventually(async () => {
      const answer = await wallet(created.json.api_key);
      return answer.status === 401 ? answer : undefined;
    }, 20_000);
    expect(refused.body.error.message).toBe('this API key has expired: it was rolled, use its successor');
    expect((await wallet(second.json.api_key)).status).toBe(401);
    expect((await wallet(rolled.json.api_key)).status).toBe(200);
    expect((await wallet(live.json.api_key)).status).toBe(200);
    const listed = (await admin('key', 'list', '--tenant', tenantId)).json.keys as Record<string, string | null>[];
    expect(listed.map((key) => [key.key_prefix, key.mode, key.expires_at !== null])).toEqual([
      [created.json.key_prefix, 'test', true],
      [second.json.key_prefix, 'test', true],
      [live.json.key_prefix, 'live', false],
      [rolled.json.key_prefix, 'test', false],
    ]);

    // No overlap at all: the previous key stops at once (within the key cache's second).
    const again = await admin('key', 'roll', '--tenant', tenantId, '--expire-old-in', '0s');
    expect(again.json.expiring.map((key: { key_prefix: string }) => key.key_prefix)).toEqual([rolled.json.key_prefix]);
    await eventually(async () => (await wallet(rolled.json.api_key)).status === 401, 5_000);
    expect((await wallet(again.json.api_key)).status).toBe(200);

    const tooLong = await admin('key', 'roll', '--tenant', tenantId, '--expire-old-in', '31d');
    expect(tooLong.code).toBe(2);
    expect(tooLong.stderr).toContain("--expire-old-in must be at most 30d, got '31d'");
    const garbled = await admin('key', 'roll', '--tenant', tenantId, '--expire-old-in', 'tomorrow');
    expect(garbled.code).toBe(2);
    expect(garbled.stderr).toContain('--expire-old-in must look like 90s, 15m, 2h or 1d');
  });

  it('lists no transfer discrepancies nor connector conflicts on a fresh database', async () => {
    const result = await admin('transfers', 'discrepancies', '--all');
    expect(result.code).toBe(0);
    expect(result.json).toEqual({ items: [], connector_conflicts: [] });
  });

  it('exits non-zero with a clear message for bad arguments', async () => {
    const cases: [string[], number, RegExp][] = [
      [['tenant', 'create'], 2, /--name is required/],
      [
        ['tenant', 'create', '--name', 'x', '--wallet-minor', '12.50'],
        2,
        /--wallet-minor must be a whole number of kobo/,
      ],
      [['tenant', 'create', '--name', 'x', '--feature', 'teleportation'], 1, /unknown feature teleportation/],
      [['tenant', 'create', '--name', 'x', '--colour', 'red'], 2, /Unknown option '--colour'/],
      [['wallet', 'fund', '--tenant', 'nope', '--amount-minor', '5'], 2, /--tenant must be a tenant id/],
      [['wallet', 'fund', '--tenant', '00000000-0000-4000-8000-000000000000', '--amount-minor', '5'], 1, /no tenant/],
      [
        ['wallet', 'fund', '--tenant', '00000000-0000-4000-8000-000000000000', '--amount-minor', '0'],
        2,
        /between 1 and/,
      ],
      [['key', 'revoke', '--key-prefix', 'sk_test_ZZZZZZZZ'], 1, /no active key/],
      [['frobnicate', 'everything'], 2, /unknown command 'frobnicate everything'/],
      [['transfers', 'settle-discrepancy', '--id', 'x', '--note', 'n'], 2, /--id must be a transfer id/],
      [['transfers', 'settle-discrepancy', '--id', '00000000-0000-4000-8000-000000000000'], 2, /--note is required/],
      [['transfers', 'discrepancies', '--open'], 2, /Unknown option '--open'/],
    ];
    for (const [args, code, message] of cases) {
      const result = await admin(...args);
      expect({ args, code: result.code }).toEqual({ args, code });
      expect(result.stderr).toMatch(message);
      expect(result.stdout).toBe('');
    }
  });
});

describe('ledger verify', () => {
  // Its own database: the corruption below must not reach the other tests' books.
  it('passes on sound books, and names a hand-corrupted balance and a transfer without its journal, exiting 1', async () => {
    const books = await createTestDatabase(2);
    const verify = () => runAdmin({ DATABASE_URL: books.url }, 'ledger', 'verify');
    try {
      const created = await runAdmin(
        { DATABASE_URL: books.url },
        'tenant',
        'create',
        '--name',
        'audited',
        '--wallet-minor',
        '250000',
      );
      const tenantId = (created.json as { tenant_id: string }).tenant_id;
      const sound = await verify();
      expect(sound.code).toBe(0);
      expect(sound.json).toMatchObject({ ok: true, counts: { entries: 1, postings: 2, transfers: 0 } });
      const names = (sound.json as { checks: { name: string; ok: boolean }[] }).checks.map((check) => [
        check.name,
        check.ok,
      ]);
      expect(names).toEqual([
        ['entries_balance', true],
        ['postings_sum_to_zero', true],
        ['balances_match_postings', true],
        ['no_negative_balances', true],
        ['transfers_match_journal', true],
        ['batches_match_journal', true],
        ['cards_match_fundings', true],
        ['holds_match_authorizations', true],
        ['authorizations_match_journal', true],
        ['credits_match_journal', true],
        ['suspense_matches_held_credits', true],
      ]);

      // One kobo appears in the wallet with no posting behind it; a transfer row has no journal.
      const sql = books.orm.em.fork();
      await sql.execute(
        `update ledger_accounts set balance_minor = balance_minor + 1 where tenant_id = ? and code = 'wallet'`,
        [tenantId],
      );
      const transferId = '00000000-0000-4000-8000-000000000042';
      await sql.execute(
        `insert into transfers (id, tenant_id, reference, request_hash, amount_minor, fee_minor, currency,
                                recipient_account, recipient_bank_code, recipient_bank, recipient_name, narration,
                                metadata, status)
         values (?, ?, 'forged', 'x', 1000, 10, 'NGN', '0123456789', '058', 'GTBank', 'A B', 'n', '{}', 'completed')`,
        [transferId, tenantId],
      );
      const broken = await verify();
      expect(broken.code).toBe(1);
      const report = broken.json as { ok: boolean; checks: { name: string; breaches: number; examples: unknown[] }[] };
      expect(report.ok).toBe(false);
      const failed = Object.fromEntries(
        report.checks.filter((check) => check.breaches > 0).map((check) => [check.name, check]),
      );
      expect(Object.keys(failed).sort()).toEqual(['balances_match_postings', 'transfers_match_journal']);
      expect(failed.balances_match_postings!.examples).toEqual([
        expect.objectContaining({
          tenant_id: tenantId,
          code: 'wallet',
          balance_minor: '250001',
          postings_minor: '250000',
        }),
      ]);
      expect(failed.transfers_match_journal!.examples).toEqual([
        expect.objectContaining({
          transfer_id: transferId,
          status: 'completed',
          total_minor: '1010',
          reserved_minor: '0',
          reserves: 0,
          settles: 0,
        }),
      ]);
    } finally {
      await books.drop();
    }
  });
});

describe('operator lists and the audit', () => {
  it('lists tenants and key prefixes (never keys), and writes every mutating command to admin_audit with its operator and outcome', async () => {
    const books = await createTestDatabase(2);
    const as = (operator: string, ...args: string[]) =>
      runAdmin({ DATABASE_URL: books.url, GATEWAY_OPERATOR: operator }, ...args);
    try {
      const created = await as('ada', 'tenant', 'create', '--name', 'listed', '--wallet-minor', '5000');
      expect(created.code).toBe(0);
      const tenantId = created.json.tenant_id as string;
      const second = await as('ada', 'key', 'create', '--tenant', tenantId);
      expect((await as('bo', 'key', 'revoke', '--key-prefix', second.json.key_prefix as string)).code).toBe(0);
      // Refused (bad flag value) and failed (no such key): written down too.
      expect((await as('bo', 'wallet', 'fund', '--tenant', tenantId, '--amount-minor', 'abc')).code).toBe(2);
      expect((await as('bo', 'key', 'revoke', '--key-prefix', 'sk_test_ZZZZZZZZ')).code).toBe(1);

      const tenants = await as('cy', 'tenant', 'list');
      expect(tenants.json).toMatchObject({
        count: 1,
        tenants: [{ tenant_id: tenantId, name: 'listed', active_keys: 1, daily_transfer_limit_minor: 500_000_000 }],
      });
      const keys = await as('cy', 'key', 'list', '--tenant', tenantId);
      expect(keys.json.keys).toEqual([
        expect.objectContaining({ key_prefix: created.json.key_prefix, mode: 'test', revoked_at: null }),
        expect.objectContaining({ key_prefix: second.json.key_prefix, revoked_at: expect.any(String) }),
      ]);
      expect(keys.stdout).not.toContain(created.json.api_key as string);
      expect(keys.stdout).not.toContain('key_hash');

      const audit = await books.orm.em.fork().execute<
        {
          operator: string;
          command: string;
          arguments: Record<string, unknown>;
          outcome: string;
          error: string | null;
        }[]
      >('select operator, command, arguments, outcome, error from admin_audit order by at, id');
      expect(audit).toEqual([
        {
          operator: 'ada',
          command: 'tenant create',
          arguments: { name: 'listed', 'wallet-minor': '5000' },
          outcome: 'succeeded',
          error: null,
        },
        { operator: 'ada', command: 'key create', arguments: { tenant: tenantId }, outcome: 'succeeded', error: null },
        {
          operator: 'bo',
          command: 'key revoke',
          arguments: { 'key-prefix': second.json.key_prefix },
          outcome: 'succeeded',
          error: null,
        },
        {
          operator: 'bo',
          command: 'wallet fund',
          arguments: { tenant: tenantId, 'amount-minor': 'abc' },
          outcome: 'refused',
          error: expect.stringContaining('--amount-minor'),
        },
        {
          operator: 'bo',
          command: 'key revoke',
          arguments: { 'key-prefix': 'sk_test_ZZZZZZZZ' },
          outcome: 'failed',
          error: expect.stringContaining('no active key'),
        },
      ]);
      // Lists change nothing and are not written down; the audit itself can be read.
      const listed = await as('cy', 'audit', 'list', '--limit', '2');
      expect(listed.json.items.map((item: { command: string }) => item.command)).toEqual(['key revoke', 'wallet fund']);
    } finally {
      await books.drop();
    }
  });
});
