// The event stream across an API crash (decisions §15, issue #31): the API process is killed with
// SIGKILL between two reads of a stream, the worker goes on settling transfers while it is down,
// and a client that reconnects with Last-Event-ID to the restarted API gets every event after the
// last one it read, once each, in stream order: what the database holds, nothing lost or repeated.
import { afterAll, beforeAll, expect, inject, it } from 'vitest';
import { createFundedTenant } from '../support/app.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { freePorts } from '../support/ports.ts';
import { type GatewayProcesses, startGatewayProcesses } from '../support/processes.ts';
import { type TestSandboxBank, startSandboxBank } from '../support/sandbox-bank.ts';
import { openEventStream } from '../support/sse.ts';

const TRANSFERS = 5;

let db: TestDatabase;
let bank: TestSandboxBank;
let gateway: GatewayProcesses;

beforeAll(async () => {
  const [apiPort] = (await freePorts(1)) as [number];
  db = await createTestDatabase();
  bank = await startSandboxBank({
    databaseUrl: db.url,
    gatewayUrl: `http://127.0.0.1:${apiPort}`,
    completionDelayMs: 1_500,
  });
  gateway = await startGatewayProcesses({
    databaseUrl: db.url,
    temporalAddress: inject('temporalAddress'),
    taskQueue: `stream-crash-${process.pid}`,
    bankUrl: bank.url,
    port: apiPort,
  });
}, 180_000);

afterAll(async () => {
  await gateway?.stop();
  await bank?.close();
  await db?.drop();
});

/** The tenant's events as the database holds them, in stream order. */
async function streamOrder(tenantId: string): Promise<{ id: string; type: string }[]> {
  return db.orm.em
    .fork()
    .execute(`select id, type from events where tenant_id = ? and not test order by txid, seq`, [tenantId]);
}

it('resumes after the API is killed between two reads: every event once, in order', async () => {
  const tenant = await createFundedTenant(db.orm, 10_000_000);
  const stream = await openEventStream(gateway.url, tenant.apiKey);
  expect(stream.status).toBe(200);
  for (let i = 0; i < TRANSFERS; i++) {
    const created = await fetch(`${gateway.url}/api/v1/transfers`, {
      method: 'POST',
      headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify({
        amount_minor: 100_000 + i,
        recipient_account: '0123456789',
        recipient_bank_code: '058',
        narration: 'stream crash',
        reference: `stream-crash-${i}`,
      }),
    });
    expect(created.status).toBe(201);
  }
  const before = await stream.take(3);
  await gateway.kill('api');
  await stream.ended;

  // While the API is down the worker settles every transfer, and their events are recorded.
  await eventually(
    async () =>
      (await streamOrder(tenant.tenantId)).filter((event) => event.type === 'transfer.settled').length === TRANSFERS,
    60_000,
  );
  await gateway.restart('api');
  const resumed = await openEventStream(gateway.url, tenant.apiKey, { lastEventId: before.at(-1)!.id });
  expect(resumed.status).toBe(200);
  const all = await streamOrder(tenant.tenantId);
  expect(all).toHaveLength(2 * TRANSFERS);
  const after = await resumed.take(all.length - before.length);
  expect([...before, ...after].map((message) => [message.id, message.event])).toEqual(
    all.map((event) => [event.id, event.type]),
  );
  await new Promise((resolve) => setTimeout(resolve, 500));
  expect(resumed.received).toHaveLength(all.length - before.length);
  console.log(
    `event stream across an API SIGKILL: ${before.length} events read before, ${after.length} after the restart, ` +
      `${all.length} in the database, none lost or repeated`,
  );
  resumed.close();
}, 180_000);
