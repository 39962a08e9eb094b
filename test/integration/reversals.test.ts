// Reversals after success (decisions §21) on the real stack: a transfer its bank paid out and then
// reversed, through each connector kind — the sandbox bank (its magic 5555555555, and its control
// route), the Paystack simulator (its `transfer.reversed` webhook and verify's `reversed`) and the
// generic test bank (contract v1.1: its `transfer.reversed` callback and status `reversed`). Each
// shows the wallet back to the kobo, one `transfer.reversed`, the statement line, a repeated word
// applied once, a word the status query denies kept as a discrepancy, and `ledger verify` passing
// (after each test too: useGatewayStack checks every invariant). The books' own check is shown to
// refuse what is not a reversal after a settlement, on rows planted in a transaction rolled back.
import type { FastifyInstance } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { walletBalance } from '../../src/ledger/ledger.ts';
import { readThrough, verifyLedger } from '../../src/ledger/verify.ts';
import { paystackSignature } from '../../src/connectors/paystack/callbacks.ts';
import { type TransferReversalState, transferReversalWorkflowId } from '../../workflows/transfers/definitions.ts';
import { auth, transferBody } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { postSignedCallback } from '../support/callbacks.ts';
import { eventually } from '../support/eventually.ts';
import { recordHistory } from '../support/histories.ts';
import { useLiveBanks } from '../support/live-banks.ts';
import type { GatewayStack } from '../support/stack.ts';
import type { GenericTestBank } from '../simulators/generic-bank.ts';
import type { PaystackSimulator } from '../simulators/paystack.ts';

const live = useLiveBanks({ taskQueue: `reversals-${process.pid}`, liveConnectors: 'paystack,generic' });
let stack: GatewayStack;
let app: FastifyInstance;
let paystack: PaystackSimulator;
let bank: GenericTestBank;
beforeAll(() => {
  ({ stack, paystack, bank } = live);
  app = stack.app;
});

type Tenant = Awaited<ReturnType<typeof createFundedTenant>>;

/** 100,000 kobo (fee 1,000) to `account`, as the tenant's client sends it: the transfer's id. */
async function send(tenant: Tenant, reference: string, account = '0123456789'): Promise<string> {
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/transfers',
    headers: auth(tenant.apiKey),
    payload: transferBody('reversal test', { reference, recipient_account: account }),
  });
  expect(created.statusCode, created.body).toBe(201);
  return created.json().data.id as string;
}

async function shown(tenant: Tenant, id: string): Promise<Record<string, unknown>> {
  const answer = await app.inject({ method: 'GET', url: `/api/v1/transfers/${id}`, headers: auth(tenant.apiKey) });
  expect(answer.statusCode).toBe(200);
  return answer.json().data as Record<string, unknown>;
}

const available = async (tenant: Tenant) =>
  (await walletBalance(stack.db.orm.em.fork(), tenant.tenantId)).availableMinor;

/** The kinds of the transfer's journal entries, oldest first. */
async function entries(id: string): Promise<string[]> {
  const rows = await stack.db.orm.em
    .fork()
    .execute<{ kind: string }[]>(
      `select kind from journal_entries where idempotency_key like ? order by created_at, id`,
      [`transfer:${id}:%`],
    );
  return rows.map((row) => row.kind);
}

/** The types of the transfer's events, oldest first. */
async function events(id: string): Promise<string[]> {
  const rows = await stack.db.orm.em
    .fork()
    .execute<{ type: string }[]>(`select type from events where payload->>'id' = ? order by created_at, id`, [id]);
  return rows.map((row) => row.type);
}

/** The tenant's statement lines of the transfer, oldest first: type and amount. */
async function statementOf(tenant: Tenant, id: string) {
  const answer = await app.inject({
    method: 'GET',
    url: '/api/v1/wallet/transactions?limit=100',
    headers: auth(tenant.apiKey),
  });
  expect(answer.statusCode).toBe(200);
  return (answer.json().data.items as { type: string; amount_minor: number; resource: { id: string } }[])
    .filter((item) => item.resource.id === id)
    .reverse()
    .map((item) => [item.type, item.amount_minor]);
}

/** The reversal run's outcome, once it has ended. */
function reversalOutcome(tenant: Tenant, reference: string): Promise<TransferReversalState> {
  return stack.client.workflow
    .getHandle(transferReversalWorkflowId(tenant.tenantId, reference))
    .result() as Promise<TransferReversalState>;
}

async function dispatchResult(eventId: string): Promise<string | undefined> {
  const [row] = await stack.db.orm.em
    .fork()
    .execute<{ dispatch_result: string }[]>('select dispatch_result from provider_callbacks where event_id = ?', [
      eventId,
    ]);
  return row?.dispatch_result;
}

/** The transfer's discrepancies, open or settled. */
async function discrepancies(id: string) {
  return stack.db.orm.em.fork().execute<
    {
      ours: string;
      bank: string;
      bank_detail: { message: string };
      settled_by: string | null;
      journal_entry_id: string | null;
    }[]
  >('select ours, bank, bank_detail, settled_by, journal_entry_id from transfer_discrepancies where transfer_id = ?', [id]);
}

async function ledgerVerifies() {
  const verified = await stack.admin('ledger', 'verify');
  expect(verified.code, verified.stdout).toBe(0);
  expect(verified.json.ok).toBe(true);
}

/** What a reversed transfer shows, to the kobo: 1,000,000 funded, 100,000 + 1,000 back. */
async function expectReversed(tenant: Tenant, id: string, startMinor: number) {
  const transfer = await eventually(async () => {
    const now = await shown(tenant, id);
    return now.reversed_at ? now : undefined;
  }, 30_000);
  expect(transfer).toMatchObject({ id, status: 'failed', failure_reason: 'reversed', amount_minor: 100_000 });
  expect(Date.parse(transfer.reversed_at as string)).toBeGreaterThanOrEqual(Date.parse(transfer.completedAt as string));
  expect(await available(tenant)).toBe(startMinor);
  expect((await walletBalance(stack.db.orm.em.fork(), tenant.tenantId)).pendingMinor).toBe(0);
  expect(await entries(id)).toEqual(['transfer_reserve', 'transfer_settle', 'transfer_reversal']);
  expect(await statementOf(tenant, id)).toEqual([
    ['transfer_reserve', -101_000],
    ['transfer_reversal', 101_000],
  ]);
  // The list shows it as the get does (without completedAt, which only the get shows).
  const { completedAt: _completedAt, ...inList } = transfer;
  const listed = await app.inject({
    method: 'GET',
    url: `/api/v1/transfers?status=failed&reference=${transfer.reference as string}`,
    headers: auth(tenant.apiKey),
  });
  expect(listed.json().data).toEqual([inList]);
  // One transfer.reversed, after the settlement it undoes; its data is the transfer as GET shows it.
  await eventually(async () => (await events(id)).includes('transfer.reversed'));
  expect(await events(id)).toEqual(['transfer.created', 'transfer.settled', 'transfer.reversed']);
  const [event] = await stack.db.orm.em
    .fork()
    .execute<{ payload: unknown }[]>(
      `select payload from events where type = 'transfer.reversed' and payload->>'id' = ?`,
      [id],
    );
  expect(event!.payload).toEqual(transfer);
  return transfer;
}

describe('the sandbox bank: 5555555555 succeeds, then is reversed about 2 s later', () => {
  it('is applied once: wallet back to the kobo, one transfer.reversed, the statement line', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000, 'sandbox reversal');
    const id = await send(tenant, 'rev-sbx-1', '5555555555');
    // First it succeeds, as any transfer does.
    await eventually(async () => (await shown(tenant, id)).status === 'successful');
    expect(await available(tenant)).toBe(899_000);
    await expectReversed(tenant, id, 1_000_000);
    expect(await reversalOutcome(tenant, 'rev-sbx-1')).toEqual({
      phase: 'done',
      bankSays: 'reversed',
      outcome: 'applied',
    });
    recordHistory('transfer-reversal-applied', transferReversalWorkflowId(tenant.tenantId, 'rev-sbx-1'));

    // The same word again (the bank's duplicate, under a new id): nothing moves.
    const again = await postSignedCallback(app, {
      id: `sbx_evt_repeat_${id}`,
      type: 'transfer.reversed',
      data: { reference: id, session_id: null, code: '00', message: 'Reversed by the beneficiary bank' },
    });
    expect(again.statusCode).toBe(200);
    expect(await dispatchResult(`sbx_evt_repeat_${id}`)).toMatch(new RegExp(`^ignored: ${id} was reversed at `));
    // A late word of its success (a new id) agrees with what happened: it was paid out, then reversed.
    const late = await postSignedCallback(app, {
      id: `sbx_evt_late_success_${id}`,
      type: 'transfer.completed',
      data: { reference: id, status: 'successful', session_id: null, code: '00', message: 'Approved' },
    });
    expect(late.statusCode).toBe(200);
    expect(await dispatchResult(`sbx_evt_late_success_${id}`)).toMatch(/^ignored: .* has finished as failed$/);
    expect(await discrepancies(id)).toEqual([]);
    // …and should a word reach the reversal workflow again (a new run of it), the books still apply it once.
    const rerun = await stack.client.workflow.execute('transferReversalWorkflow', {
      workflowId: transferReversalWorkflowId(tenant.tenantId, 'rev-sbx-1'),
      taskQueue: `reversals-${process.pid}-sandbox`,
      args: [
        {
          transferId: id,
          tenantId: tenant.tenantId,
          reference: 'rev-sbx-1',
          connector: 'sandbox',
          word: { eventId: 'repeat' },
        },
      ],
      workflowIdReusePolicy: 'ALLOW_DUPLICATE',
    });
    expect(rerun).toEqual({ phase: 'done', bankSays: 'reversed', outcome: 'unchanged' });
    expect(await available(tenant)).toBe(1_000_000);
    expect(await entries(id)).toEqual(['transfer_reserve', 'transfer_settle', 'transfer_reversal']);
    expect(await events(id)).toEqual(['transfer.created', 'transfer.settled', 'transfer.reversed']);
    await ledgerVerifies();
  }, 60_000);

  it('keeps a reversal its status query denies as a discrepancy, moving nothing; applies it once the bank confirms', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000, 'sandbox denied');
    const id = await send(tenant, 'rev-sbx-2');
    await eventually(async () => (await shown(tenant, id)).status === 'successful');
    // A signed word that the bank reversed it, which its own status query (still successful) denies.
    const word = await postSignedCallback(app, {
      id: `sbx_evt_denied_${id}`,
      type: 'transfer.reversed',
      data: { reference: id, session_id: null, code: '00', message: 'reversed, says the callback' },
    });
    expect(word.statusCode).toBe(200);
    expect(await reversalOutcome(tenant, 'rev-sbx-2')).toEqual({
      phase: 'done',
      bankSays: 'successful',
      outcome: 'discrepancy',
    });
    recordHistory('transfer-reversal-denied', transferReversalWorkflowId(tenant.tenantId, 'rev-sbx-2'));
    expect(await shown(tenant, id)).toMatchObject({ status: 'successful' });
    expect(await shown(tenant, id)).not.toHaveProperty('reversed_at');
    expect(await available(tenant)).toBe(899_000);
    expect(await entries(id)).toEqual(['transfer_reserve', 'transfer_settle']);
    expect(await events(id)).toEqual(['transfer.created', 'transfer.settled']);
    const [kept] = await discrepancies(id);
    expect(kept).toMatchObject({ ours: 'completed', bank: 'failed', settled_by: null });
    expect(kept!.bank_detail.message).toBe(
      'sandbox said it reversed the transfer, but its status query says successful: reversed, says the callback',
    );
    const listed = await stack.admin('transfers', 'discrepancies');
    expect((listed.json.items as { transfer_id: string }[]).map((item) => item.transfer_id)).toContain(id);
    await ledgerVerifies();

    // Later the bank does reverse it: its word, now confirmed, is applied, and closes the discrepancy.
    expect((await stack.bank.control(`/control/transfers/${id}/reverse`)).status).toBe(200);
    await expectReversed(tenant, id, 1_000_000);
    const [settled] = await discrepancies(id);
    expect(settled).toMatchObject({ settled_by: 'system:transfer-reversal', journal_entry_id: expect.any(String) });
    const listedAfter = await stack.admin('transfers', 'discrepancies');
    expect((listedAfter.json.items as { transfer_id: string }[]).map((item) => item.transfer_id)).not.toContain(id);
    await ledgerVerifies();
  }, 60_000);

  it('a word about a transfer still pending at the bank moves nothing', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000, 'sandbox in flight');
    const id = await send(tenant, 'rev-sbx-3', '2222222222');
    await eventually(async () => (await stack.bank.call('GET', `/transfers/${id}`)).status === 200);
    const word = await postSignedCallback(app, {
      id: `sbx_evt_early_${id}`,
      type: 'transfer.reversed',
      data: { reference: id },
    });
    expect(word.statusCode).toBe(200);
    expect(await reversalOutcome(tenant, 'rev-sbx-3')).toEqual({
      phase: 'done',
      bankSays: 'pending',
      outcome: 'unchanged',
    });
    expect(await shown(tenant, id)).toMatchObject({ status: 'pending' });
    expect(await available(tenant)).toBe(899_000);
    expect(await discrepancies(id)).toEqual([]);
    // The bank then pays it, as it would have: the transfer completes, untouched by the word.
    expect((await stack.bank.control(`/control/transfers/${id}/confirm`)).status).toBe(200);
    await eventually(async () => (await shown(tenant, id)).status === 'successful');
    expect(await entries(id)).toEqual(['transfer_reserve', 'transfer_settle']);
  }, 60_000);
});

describe('the Paystack simulator: transfer.reversed, confirmed by verify', () => {
  it('is applied once: wallet back to the kobo, one transfer.reversed; a repeated webhook is a duplicate', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000, 'paystack reversal', 'live');
    const id = await send(tenant, 'rev-ps-1');
    await eventually(() => paystack.transfers.get(id));
    await paystack.finishTransfer(id, 'success');
    await eventually(async () => (await shown(tenant, id)).status === 'successful');
    const reversed = await paystack.finishTransfer(id, 'reversed');
    expect(reversed.answered).toBe(200);
    await expectReversed(tenant, id, 1_000_000);
    expect(await reversalOutcome(tenant, 'rev-ps-1')).toMatchObject({ bankSays: 'reversed', outcome: 'applied' });
    // Paystack repeats its webhook until answered 200: the repeat is the same event, applied once.
    const repeat = await paystack.resend(reversed);
    expect(repeat.answered).toBe(200);
    expect(await available(tenant)).toBe(1_000_000);
    expect(await entries(id)).toEqual(['transfer_reserve', 'transfer_settle', 'transfer_reversal']);
    expect(await events(id)).toEqual(['transfer.created', 'transfer.settled', 'transfer.reversed']);
    await ledgerVerifies();
  }, 60_000);

  it('keeps a signed transfer.reversed that verify denies (still success) as a discrepancy', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000, 'paystack denied', 'live');
    const id = await send(tenant, 'rev-ps-2');
    await eventually(() => paystack.transfers.get(id));
    const success = await paystack.finishTransfer(id, 'success');
    await eventually(async () => (await shown(tenant, id)).status === 'successful');
    // Paystack's own signature over a transfer.reversed about a transfer verify still calls success.
    const body = JSON.stringify({ ...JSON.parse(success.body), event: 'transfer.reversed' });
    const answer = await app.inject({
      method: 'POST',
      url: '/provider-callbacks/paystack',
      headers: {
        'content-type': 'application/json',
        'x-paystack-signature': paystackSignature(paystack.secretKey, body),
      },
      payload: body,
    });
    expect(answer.statusCode).toBe(200);
    expect(await reversalOutcome(tenant, 'rev-ps-2')).toMatchObject({ bankSays: 'successful', outcome: 'discrepancy' });
    expect(await available(tenant)).toBe(899_000);
    expect(await entries(id)).toEqual(['transfer_reserve', 'transfer_settle']);
    expect(await discrepancies(id)).toEqual([
      expect.objectContaining({ ours: 'completed', bank: 'failed', settled_by: null }),
    ]);
    expect(await shown(tenant, id)).toMatchObject({ status: 'successful' });
    await ledgerVerifies();
  }, 60_000);
});

describe('the generic test bank: contract v1.1 transfer.reversed and status reversed', () => {
  /** A live transfer that goes to the generic bank: Paystack is down for its name enquiry. */
  async function viaGeneric(tenant: Tenant, reference: string, account = '0123456789') {
    paystack.failNext('html_502', 'GET /bank/resolve');
    const id = await send(tenant, reference, account);
    const [row] = await stack.db.orm.em
      .fork()
      .execute<{ connector: string }[]>('select connector from transfers where id = ?', [id]);
    expect(row!.connector).toBe('generic');
    return id;
  }

  async function control(path: string, body: object = {}) {
    const answer = await fetch(`${bank.url}${path}`, {
      method: 'POST',
      headers: { authorization: `Bearer ${live.bankKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: answer.status, body: (await answer.json()) as Record<string, unknown> };
  }

  /** The bank's signed callback, as it would send it. */
  async function genericSays(eventId: string, type: string, data: Record<string, unknown>) {
    const body = JSON.stringify({ id: eventId, type, data });
    const stamp = new Date();
    const answer = await app.inject({
      method: 'POST',
      url: '/provider-callbacks/generic',
      headers: {
        'content-type': 'application/json',
        'webhook-id': eventId,
        'webhook-timestamp': String(Math.floor(stamp.getTime() / 1000)),
        'webhook-signature': new Webhook(live.bankSecret.slice('whsec_'.length)).sign(eventId, stamp, body),
      },
      payload: body,
    });
    expect(answer.statusCode).toBe(200);
  }

  it('is applied once: wallet back to the kobo, one transfer.reversed; the bank cannot reverse it twice', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000, 'generic reversal', 'live');
    const id = await viaGeneric(tenant, 'rev-gb-1');
    await eventually(async () => (await shown(tenant, id)).status === 'successful');
    expect(await control(`/control/transfers/${id}/reverse`)).toMatchObject({
      status: 200,
      body: { reference: id, status: 'reversed' },
    });
    await expectReversed(tenant, id, 1_000_000);
    expect(await reversalOutcome(tenant, 'rev-gb-1')).toMatchObject({ bankSays: 'reversed', outcome: 'applied' });
    expect((await control(`/control/transfers/${id}/reverse`)).status).toBe(409);
    // The bank's callback delivered again under its own id: a duplicate, applied once.
    const callbacks = (await (
      await fetch(`${bank.url}/control/callbacks`, { headers: { authorization: `Bearer ${live.bankKey}` } })
    ).json()) as { callbacks: { id: string; type: string; data: { reference: string } }[] };
    const sent = callbacks.callbacks.find(
      (callback) => callback.type === 'transfer.reversed' && callback.data.reference === id,
    )!;
    await genericSays(sent.id, sent.type, sent.data);
    // And the same word under a new id: the transfer is reversed already.
    await genericSays(`evt-again-${id}`, 'transfer.reversed', { reference: id });
    expect(await dispatchResult(`evt-again-${id}`)).toMatch(/^ignored: .* was reversed at /);
    expect(await available(tenant)).toBe(1_000_000);
    expect(await events(id)).toEqual(['transfer.created', 'transfer.settled', 'transfer.reversed']);
    await ledgerVerifies();
  }, 60_000);

  it('keeps a word its status query denies as a discrepancy, moving nothing', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000, 'generic denied', 'live');
    const id = await viaGeneric(tenant, 'rev-gb-2');
    await eventually(async () => (await shown(tenant, id)).status === 'successful');
    await genericSays(`evt-denied-${id}`, 'transfer.reversed', { reference: id, message: 'a word alone' });
    expect(await reversalOutcome(tenant, 'rev-gb-2')).toMatchObject({ bankSays: 'successful', outcome: 'discrepancy' });
    expect(await available(tenant)).toBe(899_000);
    expect(await entries(id)).toEqual(['transfer_reserve', 'transfer_settle']);
    expect(await discrepancies(id)).toEqual([
      expect.objectContaining({ ours: 'completed', bank: 'failed', settled_by: null }),
    ]);
    await ledgerVerifies();
  }, 60_000);

  it('fails a transfer the bank reversed before its success reached the books: failure_reason reversed, no reversed_at', async () => {
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000, 'generic in flight', 'live');
    const id = await viaGeneric(tenant, 'rev-gb-3', '2222222222');
    await eventually(
      async () =>
        (await fetch(`${bank.url}/transfers/${id}`, { headers: { authorization: `Bearer ${live.bankKey}` } }))
          .status === 200,
    );
    // The bank pays it and its callback is lost; then it reverses it, and that word arrives.
    await control('/control/callbacks', { mode: 'drop' });
    try {
      expect((await control(`/control/transfers/${id}/complete`)).status).toBe(200);
    } finally {
      await control('/control/callbacks', { mode: 'deliver' });
    }
    expect((await shown(tenant, id)).status).toBe('pending');
    expect((await control(`/control/transfers/${id}/reverse`)).status).toBe(200);
    const failed = await eventually(async () => {
      const now = await shown(tenant, id);
      return now.status === 'failed' ? now : undefined;
    }, 30_000);
    expect(failed).toMatchObject({ failure_reason: 'reversed' });
    expect(failed).not.toHaveProperty('reversed_at');
    expect(await reversalOutcome(tenant, 'rev-gb-3')).toEqual({
      phase: 'done',
      bankSays: 'reversed',
      outcome: 'failed',
    });
    expect(await available(tenant)).toBe(1_000_000);
    expect(await entries(id)).toEqual(['transfer_reserve', 'transfer_reverse']);
    await eventually(async () => (await events(id)).includes('transfer.failed'));
    expect(await events(id)).toEqual(['transfer.created', 'transfer.failed']);
    await ledgerVerifies();
  }, 60_000);
});

describe('the books after the reversals', () => {
  it('reconcile each reversed transfer as matched: failed on both sides, the day it was reversed', async () => {
    const day = new Date().toISOString().slice(0, 10);
    const run = await stack.admin('reconcile', 'run', '--date', day);
    expect(run.code, run.stderr).toBe(0);
    const reversed = await stack.db.orm.em
      .fork()
      .execute<{ id: string }[]>('select id from transfers where reversed_at is not null');
    expect(reversed.length).toBe(4);
    const seen: { connector: string; transfer_id: string | null; outcome: string }[] = [];
    for (const connector of ['sandbox', 'paystack', 'generic']) {
      const report = await stack.admin('reconcile', 'report', '--date', day, '--connector', connector, '--all');
      expect(report.code, report.stderr).toBe(0);
      const items = (report.json.runs as { items: { transfer_id: string | null; outcome: string }[] }[]).flatMap(
        (entry) => entry.items,
      );
      for (const item of items.filter((entry) => reversed.some((row) => row.id === entry.transfer_id))) {
        expect(item).toMatchObject({ outcome: 'matched', bank_status: 'failed', our_status: 'failed' });
        seen.push({ connector, transfer_id: item.transfer_id, outcome: item.outcome });
      }
    }
    // Each reversed transfer is one matched line of its own connector's statement: two sandbox, one each else.
    expect(seen.map((item) => item.connector).sort()).toEqual(['generic', 'paystack', 'sandbox', 'sandbox']);
    expect(new Set(seen.map((item) => item.transfer_id)).size).toBe(4);
  }, 60_000);

  it('ledger verify refuses what is no reversal after a settlement (planted, rolled back)', async () => {
    const [reversed] = await stack.db.orm.em
      .fork()
      .execute<{ id: string }[]>('select id from transfers where reversed_at is not null limit 1');
    // And one the bank failed, as transfers do (1111111111).
    const tenant = await createFundedTenant(stack.db.orm, 1_000_000, 'plain failure');
    const failed = { id: await send(tenant, 'rev-plain-failed', '1111111111') };
    await eventually(async () => (await shown(tenant, failed.id)).status === 'failed');
    const breachesAfter = async (plant: string, id: string) => {
      let found: unknown[] = [];
      await stack.db.orm.em
        .fork()
        .transactional(async (tx) => {
          await tx.execute(plant, [id]);
          const report = await verifyLedger(readThrough(tx));
          found = report.checks.find((check) => check.name === 'transfers_match_journal')!.examples;
          throw new Error('rolled back');
        })
        .catch((error: Error) => {
          if (error.message !== 'rolled back') throw error;
        });
      return found;
    };
    // A reversal entry whose row does not say reversed_at.
    expect(await breachesAfter('update transfers set reversed_at = null where id = ?', reversed!.id)).toEqual([
      expect.objectContaining({ transfer_id: reversed!.id, bank_reversals: 1, reversed: false }),
    ]);
    // A row that says reversed_at with no reversal entry (a transfer that failed at the bank).
    expect(
      await breachesAfter(
        `update transfers set reversed_at = now(), failure_reason = 'reversed' where id = ?`,
        failed.id,
      ),
    ).toEqual([expect.objectContaining({ transfer_id: failed.id, bank_reversals: 0, reversed: true })]);
    // A reversal entry on a transfer that was never settled (it failed at the bank).
    expect(
      await breachesAfter(
        `insert into journal_entries (id, tenant_id, kind, idempotency_key, description)
         select gen_random_uuid(), tenant_id, 'transfer_reversal', 'transfer:' || id || ':reversal', 'planted'
           from transfers where id = ?`,
        failed.id,
      ),
    ).toEqual([expect.objectContaining({ transfer_id: failed.id, settles: 0, bank_reversals: 1 })]);
    // None of it stayed: the books verify.
    expect((await verifyLedger(readThrough(stack.db.orm.em.fork()))).ok).toBe(true);
  });
});
