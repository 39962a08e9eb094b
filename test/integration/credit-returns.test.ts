// Credits and their returns (decisions §21) on the real stack: the app, PostgreSQL, Temporal and the
// sandbox bank over HTTP. A credit returned in parts as ordinary transfers, and a part too many
// refused; a credit to a closed account sent back to its sender, in full and without a fee, once;
// one without a sender held in suspense, then released (or returned) by an operator. `ledger
// verify` runs after each test (useGatewayStack), and the operator's own `admin ledger verify` too.
import { randomUUID } from 'node:crypto';
import type { FastifyInstance } from 'fastify';
import { describe, expect, it } from 'vitest';
import { walletBalance } from '../../src/ledger/ledger.ts';
import { inboundCreditWorkflowId } from '../../workflows/virtual-accounts/definitions.ts';
import { recordHistory } from '../support/histories.ts';
import { auth } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { runAdmin } from '../support/cli.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `credit-returns-${process.pid}`;

let stack: GatewayStack;
let db: TestDatabase;
let app: FastifyInstance;

useGatewayStack({ taskQueue: TASK_QUEUE }, (started) => {
  stack = started;
  ({ db, app } = stack);
});

const SENDER = { sender_account_number: '0123456789', sender_bank_code: '058' };

interface Credit {
  id: string;
  amount_minor: number;
  fee_minor: number;
  sender_name: string | null;
  sender_account_number: string | null;
  sender_bank_code: string | null;
  transaction_reference: string;
  status: string;
  returned_minor: number;
  created_at: string;
}

async function newAccount(apiKey: string): Promise<{ id: string; account_number: string }> {
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/virtual-accounts',
    headers: auth(apiKey),
    payload: { customer_id: 'c', account_name: 'Ada Obi' },
  });
  expect(created.statusCode, created.body).toBe(201);
  return created.json().data;
}

async function closeAccount(apiKey: string, id: string) {
  const closed = await app.inject({
    method: 'POST',
    url: `/api/v1/virtual-accounts/${id}/close`,
    headers: auth(apiKey),
  });
  expect(closed.statusCode, closed.body).toBe(200);
}

/** Has the sandbox bank credit the account: its transaction reference. */
async function sandboxCredit(apiKey: string, id: string, payload: Record<string, unknown>): Promise<string> {
  const sent = await app.inject({
    method: 'POST',
    url: `/api/v1/sandbox/virtual-accounts/${id}/credits`,
    headers: auth(apiKey),
    payload,
  });
  expect(sent.statusCode, sent.body).toBe(202);
  return sent.json().data.transaction_reference as string;
}

async function credits(apiKey: string, accountId: string, query = ''): Promise<{ items: Credit[]; pagination: any }> {
  const listed = await app.inject({
    method: 'GET',
    url: `/api/v1/virtual-accounts/${accountId}/credits${query}`,
    headers: auth(apiKey),
  });
  expect(listed.statusCode, listed.body).toBe(200);
  return listed.json().data;
}

/** The account's credit with this transaction reference, once it is listed (and `until` holds of it). */
function creditOf(
  apiKey: string,
  accountId: string,
  reference: string,
  until: (credit: Credit) => boolean = () => true,
) {
  return eventually(async () => {
    const found = (await credits(apiKey, accountId)).items.find((item) => item.transaction_reference === reference);
    return found && until(found) ? found : undefined;
  });
}

function returnCredit(apiKey: string, accountId: string, creditId: string, payload?: object) {
  return app.inject({
    method: 'POST',
    url: `/api/v1/virtual-accounts/${accountId}/credits/${creditId}/return`,
    headers: auth(apiKey),
    ...(payload ? { payload } : {}),
  });
}

/** The transfer as GET shows it, once its status is `status`. */
function transferOnce(apiKey: string, id: string, status: 'successful' | 'failed') {
  return eventually(async () => {
    const answer = await app.inject({
      method: 'GET',
      url: `/api/v1/transfers/${id}?expand=details`,
      headers: auth(apiKey),
    });
    const data = answer.json().data;
    return data.status === status ? data : undefined;
  });
}

async function wallet(tenantId: string) {
  const balance = await walletBalance(db.orm.em.fork(), tenantId);
  return { available: balance.availableMinor, pending: balance.pendingMinor };
}

async function suspenseOf(tenantId: string): Promise<number | null> {
  const [row] = await db.orm.em
    .fork()
    .execute<{ balance_minor: string }[]>(
      `select balance_minor::text from ledger_accounts where tenant_id = ? and code = 'suspense'`,
      [tenantId],
    );
  return row ? Number(row.balance_minor) : null;
}

async function returnsOf(creditId: string) {
  return db.orm.em
    .fork()
    .execute<
      { id: string; amount_minor: string; fee_minor: string; funded_from: string; status: string; reference: string }[]
    >(
      'select id, amount_minor::text, fee_minor::text, funded_from, status, reference from transfers where return_of = ? order by created_at',
      [creditId],
    );
}

describe('returning a credit through the API', () => {
  it('returns a credit in two parts as ordinary transfers with return_of, and refuses a third for more than is left', async () => {
    const tenant = await createFundedTenant(db.orm, 100_000);
    const account = await newAccount(tenant.apiKey);
    const reference = await sandboxCredit(tenant.apiKey, account.id, {
      amount_minor: 1_000_000,
      sender_name: 'EMEKA NWOSU',
      reference: `paid-twice-${randomUUID()}`,
      ...SENDER,
    });
    const credit = await creditOf(tenant.apiKey, account.id, reference);
    expect(credit).toEqual({
      id: expect.any(String),
      amount_minor: 1_000_000,
      fee_minor: 0,
      sender_name: 'EMEKA NWOSU',
      sender_account_number: '0123456789',
      sender_bank_code: '058',
      transaction_reference: reference,
      status: 'applied',
      returned_minor: 0,
      created_at: expect.any(String),
    });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 1_100_000, pending: 0 });

    // First part: ₦4,000 and its fee (₦10 up to ₦5,000) from the wallet.
    const first = await returnCredit(tenant.apiKey, account.id, credit.id, {
      amount_minor: 400_000,
      reason: 'paid twice',
    });
    expect(first.statusCode, first.body).toBe(201);
    const { data, meta } = first.json();
    expect(meta.requestId).toEqual(expect.any(String));
    expect(data.credit).toMatchObject({ id: credit.id, status: 'partially_returned', returned_minor: 400_000 });
    expect(data.transfer).toMatchObject({
      amount_minor: 400_000,
      fee_minor: 1_000,
      total_minor: 401_000,
      recipient_account: '0123456789',
      recipient_bank_code: '058',
      narration: 'paid twice',
      return_of: credit.id,
    });
    expect((await wallet(tenant.tenantId)).available).toBe(699_000);

    // Second part: ₦5,000 more (fee ₦10); ₦1,000 is left.
    const second = await returnCredit(tenant.apiKey, account.id, credit.id, { amount_minor: 500_000 });
    expect(second.statusCode, second.body).toBe(201);
    expect(second.json().data.credit).toMatchObject({ status: 'partially_returned', returned_minor: 900_000 });
    expect(second.json().data.transfer).toMatchObject({
      amount_minor: 500_000,
      fee_minor: 1_000,
      narration: `Return of ${reference}`,
      return_of: credit.id,
    });

    // A third for more than is left: refused, naming what is left; nothing moves.
    const third = await returnCredit(tenant.apiKey, account.id, credit.id, { amount_minor: 100_001 });
    expect(third.statusCode, third.body).toBe(422);
    expect(third.json().error).toMatchObject({ code: 'FAILED_PRECONDITION', details: { returnable_minor: 100_000 } });
    expect((await wallet(tenant.tenantId)).available).toBe(198_000);

    // Both paid out by the bank: successful, with return_of in the get view; the wallet to the kobo.
    for (const transfer of [data.transfer, second.json().data.transfer]) {
      const done = await transferOnce(tenant.apiKey, transfer.id, 'successful');
      expect(done).toMatchObject({ return_of: credit.id, accountNumber: '0123456789', fee_minor: 1_000 });
    }
    expect(await wallet(tenant.tenantId)).toEqual({ available: 198_000, pending: 0 });
    const listed = await app.inject({ method: 'GET', url: '/api/v1/transfers', headers: auth(tenant.apiKey) });
    expect(listed.json().data.map((item: { return_of: string | null }) => item.return_of)).toEqual([
      credit.id,
      credit.id,
    ]);
    expect(await creditOf(tenant.apiKey, account.id, reference)).toMatchObject({
      status: 'partially_returned',
      returned_minor: 900_000,
    });

    // What is left, by default: the credit is then returned in full, and nothing more can go.
    const rest = await returnCredit(tenant.apiKey, account.id, credit.id);
    expect(rest.statusCode, rest.body).toBe(201);
    expect(rest.json().data.transfer).toMatchObject({ amount_minor: 100_000, fee_minor: 1_000 });
    expect(rest.json().data.credit).toMatchObject({ status: 'returned', returned_minor: 1_000_000 });
    const none = await returnCredit(tenant.apiKey, account.id, credit.id, { amount_minor: 100 });
    expect(none.statusCode).toBe(422);
    expect(none.json().error.details).toEqual({ returnable_minor: 0 });
    await transferOnce(tenant.apiKey, rest.json().data.transfer.id, 'successful');
    expect(await wallet(tenant.tenantId)).toEqual({ available: 97_000, pending: 0 });
  });

  it('lets one of two concurrent returns take what is left, and a failed return gives its part back', async () => {
    const tenant = await createFundedTenant(db.orm, 50_000);
    const account = await newAccount(tenant.apiKey);
    const reference = await sandboxCredit(tenant.apiKey, account.id, { amount_minor: 1_000_000, ...SENDER });
    const credit = await creditOf(tenant.apiKey, account.id, reference);
    const answers = await Promise.all([
      returnCredit(tenant.apiKey, account.id, credit.id, { amount_minor: 600_000 }),
      returnCredit(tenant.apiKey, account.id, credit.id, { amount_minor: 600_000 }),
    ]);
    expect(answers.map((answer) => answer.statusCode).sort()).toEqual([201, 422]);
    const refused = answers.find((answer) => answer.statusCode === 422)!;
    expect(refused.json().error).toMatchObject({ code: 'FAILED_PRECONDITION', details: { returnable_minor: 400_000 } });
    expect((await returnsOf(credit.id)).map((row) => row.amount_minor)).toEqual(['600000']);

    // A sender's account the bank fails a transfer to (1111111111): the return fails, its amount
    // and fee come back to the wallet, and the credit has all of it left again.
    const failing = await sandboxCredit(tenant.apiKey, account.id, {
      amount_minor: 200_000,
      sender_account_number: '1111111111',
      sender_bank_code: '058',
    });
    const failingCredit = await creditOf(tenant.apiKey, account.id, failing);
    const before = await wallet(tenant.tenantId);
    const sent = await returnCredit(tenant.apiKey, account.id, failingCredit.id);
    expect(sent.statusCode, sent.body).toBe(201);
    expect(sent.json().data.credit).toMatchObject({ status: 'returned', returned_minor: 200_000 });
    const failed = await transferOnce(tenant.apiKey, sent.json().data.transfer.id, 'failed');
    expect(failed.return_of).toBe(failingCredit.id);
    expect(await creditOf(tenant.apiKey, account.id, failing)).toMatchObject({ status: 'applied', returned_minor: 0 });
    expect((await wallet(tenant.tenantId)).available).toBe(before.available);
    expect(before.available).toBe(50_000 + 1_000_000 - 602_500 + 200_000);
  });

  it('refuses a credit without its sender account (422), another tenant’s credit (404), and a bad amount (400)', async () => {
    const tenant = await createFundedTenant(db.orm, 50_000);
    const other = await createFundedTenant(db.orm, 50_000);
    const account = await newAccount(tenant.apiKey);
    const reference = await sandboxCredit(tenant.apiKey, account.id, {
      amount_minor: 300_000,
      sender_name: 'NO ACCOUNT',
    });
    const credit = await creditOf(tenant.apiKey, account.id, reference);
    expect([credit.sender_account_number, credit.sender_bank_code, credit.status]).toEqual([null, null, 'applied']);
    const refused = await returnCredit(tenant.apiKey, account.id, credit.id);
    expect(refused.statusCode, refused.body).toBe(422);
    expect(refused.json().error.code).toBe('FAILED_PRECONDITION');
    expect(refused.json().error.message).toMatch(/sender's account/);

    const otherAccount = await newAccount(other.apiKey);
    for (const [key, accountId, creditId] of [
      [other.apiKey, account.id, credit.id],
      [other.apiKey, otherAccount.id, credit.id],
      [tenant.apiKey, account.id, randomUUID()],
      [tenant.apiKey, account.id, 'not-a-uuid'],
    ] as const) {
      const answer = await returnCredit(key, accountId, creditId);
      expect(answer.statusCode, answer.body).toBe(404);
      expect(answer.json().error.code).toBe('NOT_FOUND');
    }
    for (const payload of [{ amount_minor: 99 }, { amount_minor: 1.5 }, { reason: 'x'.repeat(101) }]) {
      const answer = await returnCredit(tenant.apiKey, account.id, credit.id, payload);
      expect(answer.statusCode, answer.body).toBe(400);
      expect(answer.json().error.details.fields.map((field: { path: string }) => field.path)).toEqual([
        Object.keys(payload)[0],
      ]);
    }
    // The sandbox route takes the sender's account whole, or not at all.
    const half = await app.inject({
      method: 'POST',
      url: `/api/v1/sandbox/virtual-accounts/${account.id}/credits`,
      headers: auth(tenant.apiKey),
      payload: { amount_minor: 100, sender_account_number: '0123456789' },
    });
    expect(half.statusCode).toBe(400);
    expect(half.json().error.details.fields).toEqual([
      { path: 'sender_bank_code', message: 'is required with sender_account_number' },
    ]);
    expect(await wallet(tenant.tenantId)).toEqual({ available: 350_000, pending: 0 });
  });
});

describe('a credit to a closed account (decisions §21)', () => {
  it('goes back to its sender in full, without a fee, once, though the bank sends it twice; the wallet never sees it', async () => {
    const tenant = await createFundedTenant(db.orm);
    const account = await newAccount(tenant.apiKey);
    await closeAccount(tenant.apiKey, account.id);
    const payload = {
      amount_minor: 750_000,
      sender_name: 'WRONG ACCOUNT',
      reference: `late-${randomUUID()}`,
      ...SENDER,
    };
    const reference = await sandboxCredit(tenant.apiKey, account.id, payload);
    // The bank sends the same notification again (a duplicate), while the first may still run.
    expect(await sandboxCredit(tenant.apiKey, account.id, payload)).toBe(reference);

    const credit = await creditOf(tenant.apiKey, account.id, reference, (found) => found.status === 'returned');
    expect(credit).toMatchObject({
      amount_minor: 750_000,
      returned_minor: 750_000,
      sender_account_number: '0123456789',
    });
    const handle = stack.client.workflow.getHandle(inboundCreditWorkflowId('wema', reference));
    expect(await handle.result()).toEqual({ status: 'returned' });
    const [made, ...more] = await returnsOf(credit.id);
    expect(more).toEqual([]);
    expect(made).toMatchObject({ amount_minor: '750000', fee_minor: '0', funded_from: 'suspense' });
    expect(made!.reference).toBe(`ret_${credit.id.replaceAll('-', '')}_auto`);
    const done = await transferOnce(tenant.apiKey, made!.id, 'successful');
    expect(done).toMatchObject({
      return_of: credit.id,
      amount_minor: 750_000,
      fee_minor: 0,
      accountNumber: '0123456789',
    });

    // Wait for both notifications to be dispatched: still one return, and the books as they were.
    await eventually(async () => {
      const [row] = await db.orm.em.fork().execute<{ n: string }[]>(
        `select count(*)::text as n from sandbox_bank.callbacks
            where payload->'data'->>'transaction_reference' = ? and delivered_at is not null`,
        [reference],
      );
      return row?.n === '2' ? true : undefined;
    });
    expect(await returnsOf(credit.id)).toHaveLength(1);
    expect(await wallet(tenant.tenantId)).toEqual({ available: 0, pending: 0 });
    expect(await suspenseOf(tenant.tenantId)).toBe(0);
    const shown = (
      await app.inject({ method: 'GET', url: `/api/v1/virtual-accounts/${account.id}`, headers: auth(tenant.apiKey) })
    ).json().data;
    expect([shown.total_received_minor, shown.transaction_count]).toEqual([0, 0]);
    const statement = await app.inject({
      method: 'GET',
      url: '/api/v1/wallet/transactions',
      headers: auth(tenant.apiKey),
    });
    expect(statement.json().data.items).toEqual([]);
    // The tenant cannot return it again: all of it went back.
    const again = await returnCredit(tenant.apiKey, account.id, credit.id);
    expect(again.statusCode).toBe(422);
    expect(again.json().error.details).toEqual({ returnable_minor: 0 });
    recordHistory('inbound-credit-returned', inboundCreditWorkflowId('wema', reference));
    const verified = await stack.admin('ledger', 'verify');
    expect(verified.code, verified.stderr).toBe(0);
  });

  it('is held again, in suspense, when the bank reverses its return after paying it out (decisions §21)', async () => {
    const tenant = await createFundedTenant(db.orm);
    const account = await newAccount(tenant.apiKey);
    await closeAccount(tenant.apiKey, account.id);
    // The sandbox bank pays 5555555555, then reverses it about 2 s later.
    const reference = await sandboxCredit(tenant.apiKey, account.id, {
      amount_minor: 250_075,
      sender_name: 'REVERSED SENDER',
      sender_account_number: '5555555555',
      sender_bank_code: '058',
    });
    const credit = await creditOf(tenant.apiKey, account.id, reference, (found) => found.status === 'returned');
    const [made, ...more] = await returnsOf(credit.id);
    expect(more).toEqual([]);
    expect(made).toMatchObject({ amount_minor: '250075', fee_minor: '0', funded_from: 'suspense' });
    const reversed = await transferOnce(tenant.apiKey, made!.id, 'failed');
    expect(reversed).toMatchObject({ return_of: credit.id, failure_reason: 'reversed', amount_minor: 250_075 });
    expect(reversed.reversed_at).toEqual(expect.any(String));
    // The money is back where it waited, not in the wallet: the credit is held for operators again.
    expect(await creditOf(tenant.apiKey, account.id, reference)).toMatchObject({ status: 'held', returned_minor: 0 });
    expect(await suspenseOf(tenant.tenantId)).toBe(250_075);
    expect(await wallet(tenant.tenantId)).toEqual({ available: 0, pending: 0 });
    const listed = await stack.admin('credits', 'held');
    expect(listed.json.items.filter((item: { tenant_id: string }) => item.tenant_id === tenant.tenantId)).toEqual([
      expect.objectContaining({ id: credit.id, held_minor: 250_075, sender_account_number: '5555555555' }),
    ]);
    const verified = await stack.admin('ledger', 'verify');
    expect(verified.code, verified.stderr).toBe(0);
  });

  it('holds one without a sender (or whose sender account does not exist); an operator releases one and returns another', async () => {
    const tenant = await createFundedTenant(db.orm);
    const account = await newAccount(tenant.apiKey);
    await closeAccount(tenant.apiKey, account.id);
    const unknown = await sandboxCredit(tenant.apiKey, account.id, { amount_minor: 300_000, sender_name: 'NOBODY' });
    const nowhere = await sandboxCredit(tenant.apiKey, account.id, {
      amount_minor: 45_050,
      sender_account_number: '0000000000',
      sender_bank_code: '058',
    });
    const held = await creditOf(tenant.apiKey, account.id, unknown, (found) => found.status === 'held');
    expect(held).toMatchObject({ amount_minor: 300_000, returned_minor: 0, sender_account_number: null });
    // Its sender's account is one its bank does not know: the return is refused, the credit held.
    expect(await stack.client.workflow.getHandle(inboundCreditWorkflowId('wema', nowhere)).result()).toMatchObject({
      status: 'held',
      reason: expect.stringMatching(/^FAILED_PRECONDITION: .*0000000000/),
    });
    const bounced = await creditOf(tenant.apiKey, account.id, nowhere, (found) => found.status === 'held');
    expect(await wallet(tenant.tenantId)).toEqual({ available: 0, pending: 0 });
    expect(await suspenseOf(tenant.tenantId)).toBe(345_050);
    // The tenant cannot: operators decide held credits.
    const byTenant = await returnCredit(tenant.apiKey, account.id, bounced.id);
    expect(byTenant.statusCode).toBe(422);
    expect(byTenant.json().error).toMatchObject({ code: 'FAILED_PRECONDITION', details: { returnable_minor: 0 } });

    const listed = await stack.admin('credits', 'held');
    expect(listed.code, listed.stderr).toBe(0);
    // Oldest first; the two callbacks may have come in either order.
    const mine = listed.json.items
      .filter((item: { tenant_id: string }) => item.tenant_id === tenant.tenantId)
      .sort((a: { held_minor: number }, b: { held_minor: number }) => b.held_minor - a.held_minor);
    expect(mine).toEqual([
      expect.objectContaining({
        id: held.id,
        virtual_account_id: account.id,
        account_number: account.account_number,
        account_status: 'closed',
        held_minor: 300_000,
        sender_name: 'NOBODY',
        sender_account_number: null,
        reason: 'the account is closed',
      }),
      expect.objectContaining({ id: bounced.id, held_minor: 45_050, sender_account_number: '0000000000' }),
    ]);

    // Released: to the wallet, counted by the account, heard of as any credit; once.
    const released = await stack.admin('credits', 'release', '--id', held.id);
    expect(released.code, released.stderr).toBe(0);
    expect(released.json).toMatchObject({ credit_id: held.id, released_minor: 300_000, status: 'released' });
    expect(await wallet(tenant.tenantId)).toEqual({ available: 300_000, pending: 0 });
    expect(await suspenseOf(tenant.tenantId)).toBe(45_050);
    expect(await creditOf(tenant.apiKey, account.id, unknown)).toMatchObject({ status: 'applied', returned_minor: 0 });
    const shown = (
      await app.inject({ method: 'GET', url: `/api/v1/virtual-accounts/${account.id}`, headers: auth(tenant.apiKey) })
    ).json().data;
    expect([shown.total_received_minor, shown.transaction_count]).toEqual([300_000, 1]);
    const statement = (
      await app.inject({ method: 'GET', url: '/api/v1/wallet/transactions', headers: auth(tenant.apiKey) })
    ).json().data.items;
    expect(statement).toEqual([
      expect.objectContaining({
        type: 'inbound_credit_release',
        amount_minor: 300_000,
        balance_after_minor: 300_000,
        reference: unknown,
        resource: { type: 'virtual_account', id: account.id },
      }),
    ]);
    const events = (
      await app.inject({
        method: 'GET',
        url: '/api/v1/events?type=virtual_account.credited',
        headers: auth(tenant.apiKey),
      })
    ).json().data.items;
    expect(
      events.map(
        (event: { data: { credit: { transaction_reference: string } } }) => event.data.credit.transaction_reference,
      ),
    ).toEqual([unknown]);
    const twice = await stack.admin('credits', 'release', '--id', held.id);
    expect(twice.code).toBe(1);
    expect(twice.stderr).toContain('refused (wrong_status)');

    // Returned by an operator to an account they name: without a fee, from suspense.
    const nowhereToo = await stack.admin(
      'credits',
      'return',
      '--id',
      bounced.id,
      '--account',
      '0000000000',
      '--bank-code',
      '058',
    );
    expect(nowhereToo.code).toBe(1);
    expect(nowhereToo.stderr).toContain('refused (return_refused)');
    const returned = await stack.admin(
      'credits',
      'return',
      '--id',
      bounced.id,
      '--account',
      '0234567891',
      '--bank-code',
      '044',
    );
    expect(returned.code, returned.stderr).toBe(0);
    expect(returned.json).toMatchObject({
      credit_id: bounced.id,
      amount_minor: 45_050,
      recipient_account: '0234567891',
      recipient_bank_code: '044',
    });
    recordHistory('held-credit-return', returned.json.workflow_id as string);
    const transfer = await transferOnce(tenant.apiKey, returned.json.transfer_id, 'successful');
    expect(transfer).toMatchObject({ return_of: bounced.id, amount_minor: 45_050, fee_minor: 0, bankCode: '044' });
    expect(await creditOf(tenant.apiKey, account.id, nowhere)).toMatchObject({
      status: 'returned',
      returned_minor: 45_050,
    });
    expect(await suspenseOf(tenant.tenantId)).toBe(0);
    expect(await wallet(tenant.tenantId)).toEqual({ available: 300_000, pending: 0 });
    const after = await stack.admin('credits', 'held');
    expect(after.json.items.filter((item: { tenant_id: string }) => item.tenant_id === tenant.tenantId)).toEqual([]);
    const verified = await stack.admin('ledger', 'verify');
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.json.checks.map((check: { name: string; ok: boolean }) => [check.name, check.ok])).toEqual(
      expect.arrayContaining([
        ['credits_match_journal', true],
        ['suspense_matches_held_credits', true],
      ]),
    );
  });
});

describe('ledger verify over credits', () => {
  // Its own database: the books are broken on purpose, out of the other tests' way.
  it('names a held credit its suspense account does not hold, and a return above what a credit brought in', async () => {
    const books = await createTestDatabase(2);
    const verify = () => runAdmin({ DATABASE_URL: books.url }, 'ledger', 'verify');
    try {
      const created = await runAdmin(
        { DATABASE_URL: books.url },
        'tenant',
        'create',
        '--name',
        'held',
        '--wallet-minor',
        '500000',
      );
      expect(created.code, created.stderr).toBe(0);
      const tenantId = created.json.tenant_id as string;
      const sql = books.orm.em.fork();
      const accountId = '00000000-0000-4000-8000-0000000000a1';
      await sql.execute(
        `insert into virtual_accounts (id, tenant_id, customer_id, account_number, account_name, bank_code, bank_name,
                                       provider, provider_reference, status, account_type)
         values (?, ?, 'c', '8100000011', 'A B', '035', 'Wema Bank', 'wema', 'r', 'closed', 'standard')`,
        [accountId, tenantId],
      );
      expect((await verify()).code).toBe(0);
      // A credit recorded held, with no entry behind it: suspense does not hold it.
      const heldId = '00000000-0000-4000-8000-0000000000c1';
      await sql.execute(
        `insert into inbound_credits (id, provider, transaction_reference, virtual_account_id, amount_minor, status)
         values (?, 'wema', 'FORGED1', ?, 20000, 'held')`,
        [heldId, accountId],
      );
      // A credit recorded applied with no entry either, and a transfer returning more than it brought in.
      const appliedId = '00000000-0000-4000-8000-0000000000c2';
      await sql.execute(
        `insert into inbound_credits (id, provider, transaction_reference, virtual_account_id, amount_minor, status)
         values (?, 'wema', 'FORGED2', ?, 10000, 'applied')`,
        [appliedId, accountId],
      );
      await sql.execute(
        `insert into transfers (id, tenant_id, reference, request_hash, amount_minor, fee_minor, currency,
                                recipient_account, recipient_bank_code, recipient_bank, recipient_name, narration,
                                metadata, status, return_of)
         values ('00000000-0000-4000-8000-0000000000f1', ?, 'forged-return', 'x', 10001, 0, 'NGN', '0123456789', '058',
                 'GTBank', 'A B', 'n', '{}', 'failed', ?)`,
        [tenantId, appliedId],
      );
      const broken = await verify();
      expect(broken.code).toBe(1);
      const failed = Object.fromEntries(
        (broken.json.checks as { name: string; breaches: number; examples: Record<string, unknown>[] }[])
          .filter((check) => check.breaches > 0)
          .map((check) => [check.name, check.examples]),
      );
      expect(Object.keys(failed).sort()).toEqual(['credits_match_journal', 'suspense_matches_held_credits']);
      expect(failed.credits_match_journal).toEqual(
        expect.arrayContaining([
          expect.objectContaining({
            credit_id: heldId,
            status: 'held',
            entries: 0,
            net_minor: '20000',
            to_suspense: '0',
          }),
          expect.objectContaining({ credit_id: appliedId, status: 'applied', entries: 0, returned_minor: '0' }),
        ]),
      );
      expect(failed.suspense_matches_held_credits).toEqual([
        { tenant_id: tenantId, expected_minor: '20000', balance_minor: '0' },
      ]);
      // The failed return counts for nothing; one not failed for more than the credit brought in does.
      await sql.execute(`update transfers set status = 'pending' where id = '00000000-0000-4000-8000-0000000000f1'`);
      const over = (await verify()).json.checks.find(
        (check: { name: string }) => check.name === 'credits_match_journal',
      );
      expect(over.examples).toEqual(
        expect.arrayContaining([
          expect.objectContaining({ credit_id: appliedId, returned_minor: '10001', net_minor: '10000' }),
        ]),
      );
    } finally {
      await books.drop();
    }
  });
});
