// Bulk transfers (decisions §14, issue #30) on the gateway as production runs it (the API, the
// worker and the webhook worker as processes), killed with SIGKILL in the middle of a batch: the
// worker as soon as the batch is answered, again while its items settle, and the API while the
// bank's callbacks come in. After each restart every item ends exactly once (successful, failed or
// refused), the wallet is exact to the kobo, every invariant of the books holds, and
// `transfer_batch.completed` is recorded and delivered once.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TemporalDevServerHandle, startTemporalDevServer } from '../../src/stack/temporal-dev.ts';
import { postingsTotal, walletBalance } from '../../src/ledger/ledger.ts';
import { readThrough, verifyLedger } from '../../src/ledger/verify.ts';
import { newSigningSecret } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { freePorts } from '../support/ports.ts';
import { type GatewayProcesses, startGatewayProcesses } from '../support/processes.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { type TestSandboxBank, startSandboxBank } from '../support/sandbox-bank.ts';

const ITEMS = 200;

let db: TestDatabase;
let bank: TestSandboxBank;
let gateway: GatewayProcesses;
let receiver: Receiver;

let temporal: TemporalDevServerHandle;

beforeAll(async () => {
  const [apiPort, temporalPort] = (await freePorts(2)) as [number, number];
  // Its own Temporal server, as the flood test has: its runs load no other test file's.
  temporal = await startTemporalDevServer({ port: temporalPort });
  db = await createTestDatabase();
  bank = await startSandboxBank({
    databaseUrl: db.url,
    gatewayUrl: `http://127.0.0.1:${apiPort}`,
    completionDelayMs: 100,
  });
  receiver = await startReceiver();
  gateway = await startGatewayProcesses({
    databaseUrl: db.url,
    temporalAddress: temporal.address,
    taskQueue: `batch-crash-${process.pid}`,
    bankUrl: bank.url,
    port: apiPort,
  });
}, 180_000);

afterAll(async () => {
  await gateway?.stop();
  await receiver?.close();
  await bank?.close();
  await db?.drop();
  await temporal?.stop();
});

async function count(sql: string, params: unknown[]): Promise<number> {
  const [row] = await db.orm.em.fork().execute<{ n: string }[]>(sql, params);
  return Number(row!.n);
}

it('ends every item of a batch exactly once across SIGKILLs of the worker and the API', async () => {
  const tenant = await createFundedTenant(db.orm, 100_000_000);
  const call = (method: string, path: string, body?: unknown) =>
    fetch(`${gateway.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  const endpoint = await call('POST', '/api/v1/webhook-endpoints', {
    url: `${receiver.url}/hooks`,
    events: ['transfer_batch.completed'],
    signing_secret: newSigningSecret(),
  });
  expect(endpoint.status).toBe(201);

  // Every fifth item fails at the bank, one account is unknown: each ends its own way, once.
  const transfers = Array.from({ length: ITEMS }, (_, i) => ({
    amount_minor: 10_000 + i,
    recipient_account: i === 7 ? '0000000000' : i % 5 === 0 ? '1111111111' : '0123456789',
    recipient_bank_code: '058',
    narration: `crash ${i}`,
  }));
  const response = await call('POST', '/api/v1/transfers/bulk', {
    batch_reference: `crash-${randomUUID().slice(0, 8)}`,
    transfers,
  });
  expect(response.status).toBe(202);
  const batch = ((await response.json()) as { data: { id: string } }).data;

  // The worker dies as soon as the batch is answered: its names may be being asked, its items decided.
  await gateway.kill('worker');
  await gateway.restart('worker');

  // …and again once some items have settled, while the rest are in their runs.
  await eventually(
    async () =>
      (await count(
        `select count(*)::text as n from transfer_batch_items i join transfers t on t.id = i.transfer_id
          where i.batch_id = ? and t.status in ('completed', 'failed')`,
        [batch.id],
      )) >= 20,
    120_000,
    50,
  );
  await gateway.kill('worker');
  await gateway.restart('worker');

  // The API dies while callbacks come in (the bank delivers them again once it is back).
  await gateway.kill('api');
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  await gateway.restart('api');

  const done = await eventually(
    async () => {
      const answer = await call('GET', `/api/v1/transfers/bulk/${batch.id}`);
      const data = ((await answer.json()) as { data: { status: string; counts: Record<string, number> } }).data;
      return data.status === 'completed' ? data : undefined;
    },
    240_000,
    250,
  );
  const failing = transfers.filter((_, i) => i !== 7 && i % 5 === 0);
  const paid = transfers.filter((_, i) => i !== 7 && i % 5 !== 0);
  expect(done.counts).toEqual({ refused: 1, pending: 0, successful: paid.length, failed: failing.length });

  // Exactly once: one transfer per accepted item, each reserved once and settled or reversed once
  // (ledger verify), and the wallet exact to the kobo.
  expect(await count('select count(*)::text as n from transfers where tenant_id = ?', [tenant.tenantId])).toBe(
    ITEMS - 1,
  );
  const spent = paid.reduce((sum, item) => sum + item.amount_minor + 1_000, 0);
  const balance = await walletBalance(db.orm.em.fork(), tenant.tenantId);
  expect({ available: balance.availableMinor, pending: balance.pendingMinor }).toEqual({
    available: 100_000_000 - spent,
    pending: 0,
  });
  expect(await postingsTotal(db.orm.em.fork())).toBe(0);
  const report = await verifyLedger(readThrough(db.orm.em.fork()));
  expect(report.checks.filter((check) => !check.ok)).toEqual([]);
  // The batch's event once, delivered once.
  expect(
    await count(`select count(*)::text as n from events where tenant_id = ? and type = 'transfer_batch.completed'`, [
      tenant.tenantId,
    ]),
  ).toBe(1);
  await eventually(async () => receiver.on('/hooks').length === 1, 60_000);
  await new Promise((resolve) => setTimeout(resolve, 1_000));
  expect(receiver.on('/hooks')).toHaveLength(1);
  expect(JSON.parse(receiver.on('/hooks')[0]!.body)).toMatchObject({
    type: 'transfer_batch.completed',
    data: { id: batch.id, status: 'completed', counts: done.counts },
  });
}, 600_000);
