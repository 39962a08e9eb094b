// A held transfer (decisions §20) on the gateway as production runs it (the API, the worker and the
// webhook worker as processes), across SIGKILLs: held, then the worker and the API killed and
// started again; still held, reserved and unsent; approved by a second key, the worker killed again
// at once; it is paid once (one decision, one submission in its run's history, one transfer at the
// bank), a second approval is refused already_decided, and the wallet is exact to the kobo.
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type TemporalDevServerHandle, startTemporalDevServer } from '../../src/stack/temporal-dev.ts';
import { postingsTotal, walletBalance } from '../../src/ledger/ledger.ts';
import { readThrough, verifyLedger } from '../../src/ledger/verify.ts';
import { Connection, Client } from '@temporalio/client';
import { transferWorkflowId } from '../../workflows/transfers/definitions.ts';
import { createFundedTenant } from '../support/app.ts';
import { type TestDatabase, createTestDatabase } from '../support/database.ts';
import { eventually } from '../support/eventually.ts';
import { freePorts } from '../support/ports.ts';
import { type GatewayProcesses, startGatewayProcesses } from '../support/processes.ts';
import { type TestSandboxBank, startSandboxBank } from '../support/sandbox-bank.ts';

const WALLET = 100_000_000;
const AMOUNT = 15_000_000;
const FEE = 5_000;

let db: TestDatabase;
let bank: TestSandboxBank;
let gateway: GatewayProcesses;
let temporal: TemporalDevServerHandle;
let connection: Connection;
let client: Client;

beforeAll(async () => {
  const [apiPort, temporalPort] = (await freePorts(2)) as [number, number];
  temporal = await startTemporalDevServer({ port: temporalPort });
  connection = await Connection.connect({ address: temporal.address });
  client = new Client({ connection });
  db = await createTestDatabase();
  bank = await startSandboxBank({
    databaseUrl: db.url,
    gatewayUrl: `http://127.0.0.1:${apiPort}`,
    completionDelayMs: 100,
  });
  gateway = await startGatewayProcesses({
    databaseUrl: db.url,
    temporalAddress: temporal.address,
    taskQueue: `approval-crash-${process.pid}`,
    bankUrl: bank.url,
    port: apiPort,
  });
}, 180_000);

afterAll(async () => {
  await gateway?.stop();
  await connection?.close();
  await bank?.close();
  await db?.drop();
  await temporal?.stop();
});

it('keeps a held transfer held across SIGKILLs of the worker and the API, and pays it once when approved', async () => {
  const tenant = await createFundedTenant(db.orm, WALLET);
  const call = async (
    key: string,
    method: string,
    path: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) => {
    const response = await fetch(`${gateway.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...headers,
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: response.status, body: (await response.json()) as any };
  };
  const policy = await call(tenant.apiKey, 'PUT', '/api/v1/transfer-policy', {
    approval: { above_minor: 10_000_000, new_recipient: false, every_transfer: false },
    approval_expires_in_hours: 24,
    saved_recipients_only: false,
    live_keys_need_ip_allow_list: false,
  });
  expect(policy.status).toBe(200);
  const approvers: string[] = [];
  const approverIds: string[] = [];
  for (const name of ['approver one', 'approver two']) {
    const made = await call(tenant.apiKey, 'POST', '/api/v1/api-keys', { name, scopes: ['transfers:approve', 'read'] });
    expect(made.status).toBe(201);
    approvers.push(String(made.body.data.secret));
    approverIds.push(String(made.body.data.id));
  }

  const created = await call(tenant.apiKey, 'POST', '/api/v1/transfers', {
    amount_minor: AMOUNT,
    recipient_account: '0123456789',
    recipient_bank_code: '058',
    narration: 'held across crashes',
    reference: 'held-across-crashes',
  });
  expect(created.status).toBe(201);
  const transfer = created.body.data;
  expect(transfer.approval.status).toBe('required');
  const handle = client.workflow.getHandle(transferWorkflowId(tenant.tenantId, 'held-across-crashes'));
  await eventually(async () => (await handle.describe()).searchAttributes.TransferApproval?.[0] === 'required');

  await gateway.kill('worker');
  await gateway.kill('api');
  await gateway.restart('api', 'worker');

  const after = await call(approvers[0]!, 'GET', `/api/v1/transfers/${transfer.id}`);
  expect(after.body.data).toMatchObject({ status: 'pending', approval: { status: 'required' } });
  expect((await walletBalance(db.orm.em.fork(), tenant.tenantId)).availableMinor).toBe(WALLET - AMOUNT - FEE);
  const atBank = async () =>
    (await bank.store.pool.query('select 1 from sandbox_bank.transfers where reference = $1', [transfer.id])).rows
      .length;
  expect(await atBank()).toBe(0);

  // As a client does: an answer cut off by the API's 5 s deadline (503, while the new worker takes
  // the run over from the killed one) is asked again. The decision the first request sent may have
  // been made meanwhile: then the retry answers 409 already_decided, and the transfer shows who
  // decided it (this key).
  let approved = await call(approvers[0]!, 'POST', `/api/v1/transfers/${transfer.id}/approve`);
  for (let tries = 0; approved.status === 503 && tries < 60; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    approved = await call(approvers[0]!, 'POST', `/api/v1/transfers/${transfer.id}/approve`);
  }
  if (approved.status === 409) {
    expect(approved.body.error).toMatchObject({ code: 'already_decided', details: { status: 'approved' } });
    approved = await call(approvers[0]!, 'GET', `/api/v1/transfers/${transfer.id}`);
  }
  expect(approved.status, JSON.stringify(approved.body)).toBe(200);
  expect(approved.body.data.approval).toMatchObject({
    status: 'approved',
    decided_by: { type: 'key', id: approverIds[0], name: 'approver one' },
  });
  await gateway.kill('worker');
  await gateway.restart('worker');

  const second = await call(approvers[1]!, 'POST', `/api/v1/transfers/${transfer.id}/approve`);
  expect(second.status).toBe(409);
  expect(second.body.error).toMatchObject({ code: 'already_decided', details: { status: 'approved' } });

  await eventually(
    async () =>
      (await call(approvers[0]!, 'GET', `/api/v1/transfers/${transfer.id}`)).body.data.status === 'successful',
    // A submission cut off by the kill may have been taken: §17's status queries decide it (minutes).
    300_000,
    250,
  );
  const events = (await handle.fetchHistory()).events ?? [];
  const activities = events.flatMap((event) => event.activityTaskScheduledEventAttributes?.activityType?.name ?? []);
  expect(activities.filter((name) => name === 'decideApproval')).toHaveLength(1);
  // Sent to the bank once, or again only after the bank's status queries proved, twice, that the
  // submission before it was never taken (decisions §17: the kill can cut a submission off before
  // the bank sees it; it is then sent again under the same reference, never twice to the bank).
  let submissions = 0;
  let queriesSinceSubmission = 0;
  for (const name of activities) {
    if (name === 'submitToBank') {
      if (submissions > 0) expect(queriesSinceSubmission).toBeGreaterThanOrEqual(2);
      submissions += 1;
      queriesSinceSubmission = 0;
    } else if (name === 'queryBankStatus') queriesSinceSubmission += 1;
  }
  expect(submissions).toBeGreaterThanOrEqual(1);
  expect(await atBank()).toBe(1);
  const balance = await walletBalance(db.orm.em.fork(), tenant.tenantId);
  expect({ available: balance.availableMinor, pending: balance.pendingMinor }).toEqual({
    available: WALLET - AMOUNT - FEE,
    pending: 0,
  });
  const [decided] = await db.orm.em.fork().execute<{ approved: string; audited: string }[]>(
    `select (select count(*) from events where tenant_id = ? and type = 'transfer.approved')::text as approved,
              (select count(*) from audit_log where tenant_id = ? and action = 'transfer.approved')::text as audited`,
    [tenant.tenantId, tenant.tenantId],
  );
  expect(decided).toEqual({ approved: '1', audited: '1' });
  expect(await postingsTotal(db.orm.em.fork())).toBe(0);
  const report = await verifyLedger(readThrough(db.orm.em.fork()));
  expect(report.checks.filter((check) => !check.ok)).toEqual([]);
}, 600_000);
