// The API's Prometheus metrics after known operations, to the unit: two transfers the bank pays, one
// it fails, one refused for balance; what the books say (transfers by status and kobo, the system
// accounts), what the process saw (creates by outcome, requests by route and status), and the
// database read at the scrape. Served only on their own address (stack.test.ts checks the port).
import type { Client } from '@temporalio/client';
import type { FastifyInstance } from 'fastify';
import { expect, inject, it } from 'vitest';
import { transferWorkflowId } from '../../workflows/transfers/definitions.ts';
import { auth, transferBody } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { runAdmin } from '../support/cli.ts';
import type { TestDatabase } from '../support/database.ts';
import { useGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `metrics-${process.pid}`;

let db: TestDatabase;
let app: FastifyInstance;
let client: Client;

useGatewayStack({ taskQueue: TASK_QUEUE }, (started) => {
  ({ db, app, client } = started);
});

/** The value of one series in the exposition text (NaN when absent). */
function value(text: string, series: string): number {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line === undefined ? Number.NaN : Number(line.slice(series.length + 1));
}

it('count transfers by status with their kobo, the system accounts, creates by outcome and requests by route', async () => {
  const before = await app.metrics.scrape();
  expect(value(before, 'gateway_metrics_database_up')).toBe(1);
  expect(value(before, 'gateway_transfers{status="completed"}')).toBe(0);

  const tenant = await createFundedTenant(db.orm, 1_000_000, 'metrics');
  const send = (reference: string, fields: Record<string, unknown>) =>
    app.inject({
      method: 'POST',
      url: '/api/v1/transfers',
      headers: auth(tenant.apiKey),
      payload: transferBody('metrics', { reference, ...fields }),
    });
  const answers = [
    await send('m-paid-1', { amount_minor: 100_000 }),
    await send('m-paid-2', { amount_minor: 250_000 }),
    await send('m-failed', { amount_minor: 40_000, recipient_account: '1111111111' }),
    // 2 000 000 kobo is more than is left: refused, nothing reserved.
    await send('m-refused', { amount_minor: 2_000_000 }),
  ];
  expect(answers.map((answer) => answer.statusCode)).toEqual([201, 201, 201, 422]);
  // A repeat of the first: answered from the projection.
  expect((await send('m-paid-1', { amount_minor: 100_000 })).statusCode).toBe(200);
  for (const reference of ['m-paid-1', 'm-paid-2', 'm-failed']) {
    await client.workflow.getHandle(transferWorkflowId(tenant.tenantId, reference)).result();
  }

  const text = await app.metrics.scrape();
  const expected: Record<string, number> = {
    'gateway_transfers{status="completed"}': 2,
    'gateway_transfers_amount_minor{status="completed"}': 350_000,
    'gateway_transfers{status="failed"}': 1,
    'gateway_transfers_amount_minor{status="failed"}': 40_000,
    'gateway_transfers{status="pending"}': 0,
    'gateway_transfers{status="processing"}': 0,
    gateway_transfers_stuck: 0,
    // Fees: 1 000 kobo each up to ₦5 000; the failed transfer's fee went back with its amount.
    'gateway_ledger_system_balance_minor{account="fee_revenue",currency="NGN"}': 2_000,
    'gateway_transfer_create_duration_seconds_count{outcome="created"}': 3,
    'gateway_transfer_create_duration_seconds_count{outcome="refused"}': 1,
    'gateway_transfer_create_duration_seconds_count{outcome="repeated"}': 1,
    'gateway_http_requests_total{route="/api/v1/transfers",method="POST",status="201"}': 3,
    'gateway_http_requests_total{route="/api/v1/transfers",method="POST",status="422"}': 1,
    'gateway_http_requests_total{route="/api/v1/transfers",method="POST",status="200"}': 1,
  };
  expect(Object.fromEntries(Object.keys(expected).map((series) => [series, value(text, series)]))).toEqual(expected);
  expect(value(text, 'gateway_fanout_lag_seconds')).toBeGreaterThanOrEqual(0);
  expect(value(text, 'gateway_db_pool_connections{state="total"}')).toBeGreaterThan(0);

  // What an operator sees of one of them: the projection, its journal to the kobo, its workflow.
  const paid = answers[1]!.json().data as { id: string };
  const shown = await runAdmin(
    { DATABASE_URL: db.url, TEMPORAL_ADDRESS: inject('temporalAddress'), TEMPORAL_UI_URL: 'http://ui.example:8233' },
    'transfers',
    'show',
    '--tenant',
    tenant.tenantId,
    '--reference',
    'm-paid-2',
  );
  expect(shown.code).toBe(0);
  expect(shown.json.transfer).toMatchObject({
    id: paid.id,
    status: 'completed',
    amount_minor: 250_000,
    fee_minor: 1_000,
  });
  // Postings as the ledger wrote them (in its lock order), compared as sets.
  const journal = (shown.json.journal as { kind: string; postings: { account: string; amount_minor: number }[] }[]).map(
    (entry) => ({ kind: entry.kind, postings: [...entry.postings].sort((a, b) => a.account.localeCompare(b.account)) }),
  );
  expect(journal).toEqual([
    {
      kind: 'transfer_reserve',
      postings: [
        { account: 'in_flight', amount_minor: 251_000 },
        { account: 'wallet', amount_minor: -251_000 },
      ],
    },
    {
      kind: 'transfer_settle',
      postings: [
        { account: 'in_flight', amount_minor: -251_000 },
        { account: 'system:bank_settlement', amount_minor: 250_000 },
        { account: 'system:fee_revenue', amount_minor: 1_000 },
      ],
    },
  ]);
  const workflowId = transferWorkflowId(tenant.tenantId, 'm-paid-2');
  expect(shown.json.workflow).toMatchObject({
    workflow_id: workflowId,
    status: 'COMPLETED',
    history_length: expect.any(Number),
    history_url: `http://ui.example:8233/namespaces/default/workflows/${encodeURIComponent(workflowId)}`,
  });
});
