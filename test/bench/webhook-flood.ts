// The webhook flood of issue #27, against a running gateway (`npm start`): one sandbox tenant
// registers catch-all (`*`) and delivery-event endpoints that all point at a receiver answering 500,
// then changes a card's security settings a few times; another tenant creates transfers, before
// (the quiet baseline) and during the flood. Prints each phase's statuses and latencies.
//
//   node test/bench/webhook-flood.ts [--catch-all 10] [--delivery-endpoints 10] [--events 10]
//        [--creates 20] [--flood-deliveries 300] [--later-s 0]
//
// Run it with the environment of the `npm start` it measures (PORT, EMBEDDED_PG_PORT,
// TEMPORAL_DEV_PORT…): the tenants are made with the operator CLI, which reads the same variables.
// The flood tenant's endpoints are deleted at the end, so its deliveries stop at their next attempt.
import { spawnSync } from 'node:child_process';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { loadConfig } from '../../src/config.ts';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';
import { percentile } from './load.ts';

const { values } = parseArgs({
  options: {
    'catch-all': { type: 'string', default: '10' },
    'delivery-endpoints': { type: 'string', default: '10' },
    events: { type: 'string', default: '10' },
    creates: { type: 'string', default: '20' },
    'flood-deliveries': { type: 'string', default: '300' },
    'later-s': { type: 'string', default: '0' },
  },
});
const catchAll = Number(values['catch-all']);
const deliveryEndpoints = Number(values['delivery-endpoints']);
const events = Number(values.events);
const creates = Number(values.creates);
const floodDeliveries = Number(values['flood-deliveries']);
const laterS = Number(values['later-s']);

const config = loadConfig();
const api = `http://${config.HOST === '0.0.0.0' ? '127.0.0.1' : config.HOST}:${config.PORT}`;

function admin(...args: string[]): Record<string, any> {
  const run = spawnSync(process.execPath, [join(PROJECT_ROOT, 'src/admin-cli/main.ts'), ...args], {
    env: { ...process.env, GATEWAY_OPERATOR: 'webhook-flood' },
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`admin ${args.join(' ')} failed: ${run.stderr}`);
  return JSON.parse(run.stdout) as Record<string, any>;
}

async function call(key: string, method: string, path: string, body?: unknown) {
  const started = performance.now();
  const response = await fetch(`${api}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
    signal: AbortSignal.timeout(60_000),
  });
  const text = await response.text();
  return { status: response.status, ms: performance.now() - started, json: text ? JSON.parse(text) : undefined };
}

let received = 0;
const receiver = createServer((request, response) => {
  request.resume();
  request.on('end', () => {
    received += 1;
    response.writeHead(500, { 'content-type': 'text/plain' }).end('down');
  });
});
await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
const receiverUrl = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;

const flood = admin('tenant', 'create', '--name', 'flood');
const victim = admin(
  'tenant',
  'create',
  '--name',
  'victim',
  '--wallet-minor',
  '100000000000',
  '--daily-limit-minor',
  '100000000000',
);
const card = await call(flood.api_key, 'POST', '/api/v1/cards', { customer_id: 'flood' });
if (card.status !== 201) throw new Error(`card create answered ${card.status}: ${JSON.stringify(card.json)}`);
const cardId = card.json.data.id as string;
const deliveriesMade = async () =>
  (await call(flood.api_key, 'GET', '/api/v1/webhook-deliveries?limit=1')).json.data.pagination.total as number;

let sequence = 0;
async function transferCreates(label: string) {
  const results: { status: number; ms: number }[] = [];
  const before = { deliveries: await deliveriesMade(), received };
  for (let i = 0; i < creates; i++) {
    const { status, ms } = await call(victim.api_key, 'POST', '/api/v1/transfers', {
      amount_minor: 100_000,
      recipient_account: '0123456789',
      recipient_bank_code: '058',
      narration: 'flood check',
      reference: `flood-${Date.now()}-${sequence++}`,
    });
    results.push({ status, ms });
  }
  const after = { deliveries: await deliveriesMade(), received };
  const sorted = results.map((result) => result.ms).sort((a, b) => a - b);
  const statuses: Record<number, number> = {};
  for (const { status } of results) statuses[status] = (statuses[status] ?? 0) + 1;
  console.log(
    JSON.stringify({
      phase: label,
      creates: results.length,
      statuses,
      p50_ms: Math.round(percentile(sorted, 50)),
      max_ms: Math.round(sorted.at(-1)!),
      latencies_ms: results.map((result) => Math.round(result.ms)),
      flood_deliveries: [before.deliveries, after.deliveries],
      receiver_requests: [before.received, after.received],
    }),
  );
}

// Before the endpoints exist: registering them is already a flood (each webhook.endpoint.created event
// reaches every catch-all endpoint, and each of those deliveries makes delivery events).
await transferCreates('quiet baseline');
const endpoints: string[] = [];
for (let i = 0; i < catchAll + deliveryEndpoints; i++) {
  const registered = await call(flood.api_key, 'POST', '/api/v1/webhook-endpoints', {
    url: `${receiverUrl}/hook-${i}`,
    events:
      i < deliveryEndpoints ? ['event.delivery.queued', 'event.delivery.failed', 'event.delivery.succeeded'] : ['*'],
    signing_secret: `whsec_${Buffer.alloc(24, i).toString('base64')}`,
  });
  if (registered.status !== 201) throw new Error(`endpoint ${i} answered ${registered.status}`);
  endpoints.push(registered.json.data.id as string);
}

for (let i = 0; i < events; i++) {
  const put = await call(flood.api_key, 'PUT', `/api/v1/cards/${cardId}/security-settings`, {
    per_transaction_limit_minor: 100_000 + i,
    daily_limit_minor: null,
    channels: { pos: true, web: true, atm: i % 2 === 0 },
    blocked_merchant_categories: [],
  });
  if (put.status !== 200) throw new Error(`security-settings answered ${put.status}`);
}
const floodStarted = Date.now();
while ((await deliveriesMade()) < floodDeliveries && Date.now() - floodStarted < 120_000) {
  await new Promise((resolve) => setTimeout(resolve, 250));
}
console.log(
  JSON.stringify({
    phase: 'flood running',
    after_s: (Date.now() - floodStarted) / 1000,
    flood_deliveries: await deliveriesMade(),
    receiver_requests: received,
  }),
);
await transferCreates('during the flood');
if (laterS > 0) {
  await new Promise((resolve) => setTimeout(resolve, laterS * 1000));
  await transferCreates(`${laterS} s later`);
}
for (const id of endpoints) await call(flood.api_key, 'DELETE', `/api/v1/webhook-endpoints/${id}`);
receiver.close();
receiver.closeAllConnections();
