// Failover between live connectors that never pays twice (decisions §13), on a deployment with
// LIVE_CONNECTORS=paystack,generic: the Paystack simulator first, the generic test bank second.
// A transfer goes to the first connector whose name enquiry answers; a definitive "not taken"
// passes it to the next; once a submission may have been accepted (its answer lost), it stays
// with that connector and is resolved there, never submitted again, elsewhere or there, whatever a
// retry would have met (decisions §17); another connector's word about it is a connector conflict.
// Each bank's own record is read to prove where the transfer went, and the wallet to the kobo.
import type { FastifyInstance } from 'fastify';
import { Webhook } from 'standardwebhooks';
import { beforeAll, describe, expect, it } from 'vitest';
import { walletBalance } from '../../src/ledger/ledger.ts';
import { findTransfer } from '../../src/transfers/store.ts';
import { TransferConnectorKey, TransferReferenceKey } from '../../workflows/search-attributes.ts';
import { transferWorkflowId } from '../../workflows/transfers/definitions.ts';
import { auth, transferBody } from '../support/api.ts';
import { eventually } from '../support/eventually.ts';
import { offersAt, useLiveBanks } from '../support/live-banks.ts';
import type { GatewayStack } from '../support/stack.ts';
import type { GenericTestBank } from '../simulators/generic-bank.ts';
import type { PaystackSimulator } from '../simulators/paystack.ts';

const live = useLiveBanks({ taskQueue: `failover-${process.pid}`, liveConnectors: 'paystack,generic' });
let stack: GatewayStack;
let app: FastifyInstance;
let paystack: PaystackSimulator;
let bank: GenericTestBank;
beforeAll(() => {
  ({ stack, paystack, bank } = live);
  app = stack.app;
});

/** The test bank's own record of a transfer: its status, or 404 when it never took it. */
async function atBank(reference: string): Promise<{ status: number; body?: { status: string } }> {
  const response = await fetch(`${bank.url}/transfers/${reference}`, {
    headers: { authorization: `Bearer ${live.bankKey}` },
  });
  return response.status === 200
    ? { status: 200, body: (await response.json()) as { status: string } }
    : { status: response.status };
}

async function liveKey(name: string, fundMinor: number) {
  const created = await stack.admin('tenant', 'create', '--name', name);
  const tenantId = created.json.tenant_id as string;
  const live = await stack.admin('key', 'create', '--tenant', tenantId, '--live');
  await stack.admin('wallet', 'fund', '--tenant', tenantId, '--amount-minor', String(fundMinor), '--live');
  return { liveTenantId: live.json.mode_tenant_id as string, key: live.json.api_key as string };
}

async function send(key: string, reference: string) {
  const created = await app.inject({
    method: 'POST',
    url: '/api/v1/transfers',
    headers: auth(key),
    payload: transferBody('failover', { reference }),
  });
  expect(created.statusCode).toBe(201);
  return created.json().data.id as string;
}

const statusOf = async (id: string) => (await findTransfer(stack.db.orm.em.fork(), id))?.status;

/** The generic bank's signed `transfer.completed` about a transfer, as it would send it: the event id. */
async function genericSays(id: string, status: 'successful' | 'failed'): Promise<string> {
  const eventId = `evt-${status}-${id}`;
  const body = JSON.stringify({
    id: eventId,
    type: 'transfer.completed',
    data: {
      reference: id,
      status,
      session_id: 's',
      code: status === 'successful' ? '00' : '57',
      message: status === 'successful' ? 'Approved' : 'not permitted',
    },
  });
  const stamp = new Date();
  const signature = new Webhook(live.bankSecret.slice('whsec_'.length)).sign(eventId, stamp, body);
  const answer = await app.inject({
    method: 'POST',
    url: '/provider-callbacks/generic',
    headers: {
      'content-type': 'application/json',
      'webhook-id': eventId,
      'webhook-timestamp': String(Math.floor(stamp.getTime() / 1000)),
      'webhook-signature': signature,
    },
    payload: body,
  });
  expect(answer.statusCode).toBe(200);
  return eventId;
}

async function dispatchResult(eventId: string): Promise<string | undefined> {
  const [recorded] = await stack.db.orm.em
    .fork()
    .execute<{ dispatch_result: string }[]>('select dispatch_result from provider_callbacks where event_id = ?', [
      eventId,
    ]);
  return recorded?.dispatch_result;
}

/** The transfer's open connector conflicts, as `admin transfers discrepancies` lists them. */
async function openConflicts(id: string): Promise<Record<string, unknown>[]> {
  const listed = await stack.admin('transfers', 'discrepancies');
  return (listed.json.connector_conflicts as Record<string, unknown>[]).filter(
    (conflict) => conflict.transfer_id === id,
  );
}

describe('LIVE_CONNECTORS=paystack,generic', () => {
  it('sends a transfer to Paystack when its name enquiry answers, and to nobody else', async () => {
    const { key, liveTenantId } = await liveKey('first choice', 500_000);
    const id = await send(key, 'first-1');
    expect((await findTransfer(stack.db.orm.em.fork(), id))?.connector).toBe('paystack');
    await eventually(() => paystack.transfers.get(id));
    await paystack.finishTransfer(id, 'success');
    await eventually(async () => (await statusOf(id)) === 'completed');
    expect(await atBank(id)).toEqual({ status: 404 });
    expect((await walletBalance(stack.db.orm.em.fork(), liveTenantId)).availableMinor).toBe(399_000);
  });

  it('passes the transfer to the generic bank when Paystack is down for the name enquiry', async () => {
    const { key, liveTenantId } = await liveKey('paystack down', 500_000);
    paystack.failNext('html_502', 'GET /bank/resolve');
    const id = await send(key, 'down-1');
    expect((await findTransfer(stack.db.orm.em.fork(), id))?.connector).toBe('generic');
    await eventually(async () => (await statusOf(id)) === 'completed');
    expect(await atBank(id)).toMatchObject({ status: 200, body: { status: 'successful' } });
    expect(paystack.transfers.has(id)).toBe(false);
    expect((await walletBalance(stack.db.orm.em.fork(), liveTenantId)).availableMinor).toBe(399_000);
  });

  it('passes the transfer on after a definitive "not taken" (Paystack balance too low), recorded as generic', async () => {
    const { key, liveTenantId } = await liveKey('not taken', 500_000);
    paystack.setBalance(0);
    try {
      const id = await send(key, 'not-taken-1');
      await eventually(async () => (await statusOf(id)) === 'completed');
      const row = await findTransfer(stack.db.orm.em.fork(), id);
      expect(row).toMatchObject({ connector: 'generic', status: 'completed', amount_minor: 100_000, fee_minor: 1_000 });
      expect(paystack.transfers.has(id)).toBe(false);
      expect(await atBank(id)).toMatchObject({ status: 200, body: { status: 'successful' } });
      expect((await walletBalance(stack.db.orm.em.fork(), liveTenantId)).availableMinor).toBe(399_000);
      // A run of the lean shape leaves its connector to the row (above), never upserting the
      // search attribute (docs/workflows.md#the-lean-shape); its start attributes find it.
      const described = await stack.client.workflow
        .getHandle(transferWorkflowId(liveTenantId, 'not-taken-1'))
        .describe();
      expect(described.typedSearchAttributes.get(TransferConnectorKey)).toBeUndefined();
      expect(described.typedSearchAttributes.get(TransferReferenceKey)).toBe('not-taken-1');
    } finally {
      paystack.setBalance(1_000_000_000_00);
    }
  });

  it('keeps a transfer whose answer was lost with Paystack, resolves it there, and never submits it to the generic bank', async () => {
    const { key, liveTenantId } = await liveKey('lost answer', 500_000);
    paystack.failNext('lose_answer', 'POST /transfer');
    const id = await send(key, 'lost-1');
    // Paystack recorded it though its answer was lost: possibly taken there, never sent again.
    await eventually(() => paystack.transfers.get(id));
    expect((await findTransfer(stack.db.orm.em.fork(), id))?.connector).toBe('paystack');
    await eventually(async () => (await statusOf(id)) === 'processing');
    await paystack.finishTransfer(id, 'success');
    await eventually(async () => (await statusOf(id)) === 'completed');
    expect(await atBank(id)).toEqual({ status: 404 });
    expect([...paystack.transfers.values()].filter((transfer) => transfer.reference === id)).toHaveLength(1);
    expect((await walletBalance(stack.db.orm.em.fork(), liveTenantId)).availableMinor).toBe(399_000);
  });

  it("keeps the generic bank's word about a transfer Paystack holds as a connector conflict, never applied", async () => {
    const { key } = await liveKey('wrong sender', 500_000);
    const id = await send(key, 'wrong-sender-1');
    await eventually(() => paystack.transfers.get(id));
    const eventId = await genericSays(id, 'failed');
    expect(await dispatchResult(eventId)).toBe(`conflict: ${id} is with paystack; generic says failed`);
    expect(await statusOf(id)).not.toBe('failed');
    await paystack.finishTransfer(id, 'success');
    await eventually(async () => (await statusOf(id)) === 'completed');
    expect(await openConflicts(id)).toEqual([
      expect.objectContaining({ holder: 'paystack', connector: 'generic', said: 'failed', amount_minor: 100_000 }),
    ]);
  });
});

describe('a lost answer, then a refusal: held where it may have been taken, sent once, never elsewhere (decisions §17)', () => {
  /**
   * Paystack takes the transfer and its answer is lost; `then` is what a retry would meet. Nothing is
   * retried: the transfer stays with Paystack, whose webhook settles it; the generic bank never sees it.
   */
  async function lostThen(name: string, then: () => void, meanwhile: () => Promise<void> = async () => {}) {
    const { key, liveTenantId } = await liveKey(name, 500_000);
    const posts = () => paystack.requests.filter((request) => request === 'POST /transfer').length;
    const before = posts();
    paystack.failNext('lose_answer', 'POST /transfer');
    then();
    const planned = paystack.pendingFaults().length;
    const id = await send(key, `${name}-1`);
    // Taken by Paystack, whose answer was lost: possibly taken, processing, its connector Paystack.
    await eventually(async () => {
      const row = await findTransfer(stack.db.orm.em.fork(), id);
      return row?.status === 'processing' && row.possibly_taken_at !== null;
    });
    expect(paystack.transfers.get(id)?.status).toBe('pending');
    await meanwhile();
    await paystack.finishTransfer(id, 'success');
    await eventually(async () => (await statusOf(id)) === 'completed');
    const row = await findTransfer(stack.db.orm.em.fork(), id);
    expect(row).toMatchObject({ connector: 'paystack', status: 'completed', amount_minor: 100_000, fee_minor: 1_000 });
    expect(row!.ambiguous_since).toBeInstanceOf(Date);
    // Sent to Paystack once; the refusal a retry would have met is still waiting; nothing at the generic bank.
    expect(posts() - before).toBe(1);
    expect(paystack.pendingFaults()).toHaveLength(planned - 1);
    paystack.clearFaults();
    expect(offersAt(bank, id)).toBe(0);
    expect(await atBank(id)).toEqual({ status: 404 });
    expect((await walletBalance(stack.db.orm.em.fork(), liveTenantId)).availableMinor).toBe(399_000);
    // The generic bank's late word about it (it does not hold it) is a connector conflict, not a payment.
    const eventId = await genericSays(id, 'successful');
    expect(await dispatchResult(eventId)).toBe(`conflict: ${id} is with paystack; generic says successful`);
    expect(await openConflicts(id)).toEqual([
      expect.objectContaining({
        holder: 'paystack',
        connector: 'generic',
        said: 'successful',
        transfer_status: 'completed',
      }),
    ]);
    expect((await walletBalance(stack.db.orm.em.fork(), liveTenantId)).availableMinor).toBe(399_000);
    return id;
  }

  it('(a) a duplicate refusal in words the connector does not know', async () => {
    await lostThen('dup-words', () => paystack.failNext('duplicate_unrecognised', 'POST /transfer'));
  });

  it('(b) a recipient refusal on a worker whose recipient cache is cold', async () => {
    await lostThen(
      'cold-cache',
      () => paystack.failNext('recipient_refused', 'POST /transferrecipient'),
      // Another worker takes over, with no recipient kept: it sends nothing, and asks Paystack only.
      async () => {
        await stack.stopWorker();
        await stack.startWorker();
      },
    );
  });

  it('(c) a 401', async () => {
    await lostThen('unauthorized', () => paystack.failNext('unauthorized', 'POST /transfer'));
  });

  it('counts every connector conflict on the API metrics, by holder and the connector that answered', async () => {
    const text = await stack.app.metrics.scrape();
    const line = text
      .split('\n')
      .find((candidate) =>
        candidate.startsWith('gateway_connector_conflicts_total{holder="paystack",connector="generic"} '),
      );
    // The four conflicts this file recorded: one per test above it.
    expect(line?.split(' ')[1]).toBe('4');
    const listed = await stack.admin('transfers', 'discrepancies');
    expect((listed.json.connector_conflicts as unknown[]).length).toBe(4);
  });
});
