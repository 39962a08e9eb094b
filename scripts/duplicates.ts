// `npm run duplicates`: against a running gateway (`npm start`), N concurrent identical
// POST /api/v1/transfers (same reference, same body; default 500), then a tally of status codes,
// latencies and the wallet after it. With --idempotency-key, the burst carries one Idempotency-Key
// and no reference. Creates its own funded sandbox tenant through the operator CLI.
//   npm run duplicates -- [--count 500] [--api http://127.0.0.1:3000] [--idempotency-key]
import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    count: { type: 'string', default: '500' },
    api: { type: 'string', default: process.env.GATEWAY_URL ?? 'http://127.0.0.1:3000' },
    'idempotency-key': { type: 'boolean', default: false },
  },
});
const count = Number(values.count);
if (!Number.isInteger(count) || count < 1 || count > 10_000) throw new Error('--count must be 1 to 10000');
const api = values.api.replace(/\/$/, '');

const created = JSON.parse(
  execFileSync(
    'npm',
    ['run', '--silent', 'admin', '--', 'tenant', 'create', '--name', 'duplicates', '--wallet-minor', '10000000'],
    {
      encoding: 'utf8',
    },
  ),
) as { tenant_id: string; api_key: string };
const headers: Record<string, string> = {
  authorization: `Bearer ${created.api_key}`,
  'content-type': 'application/json',
  ...(values['idempotency-key'] ? { 'idempotency-key': `dup-${randomUUID()}` } : {}),
};
const body = JSON.stringify({
  amount_minor: 1_000_000,
  recipient_account: '0123456789',
  recipient_bank_code: '058',
  narration: 'duplicate burst',
  ...(values['idempotency-key'] ? {} : { reference: `dup-${randomUUID()}` }),
});

const started = performance.now();
const results = await Promise.all(
  Array.from({ length: count }, async () => {
    const sent = performance.now();
    try {
      const response = await fetch(`${api}/api/v1/transfers`, { method: 'POST', headers, body });
      const answer = (await response.json()) as { data?: { id?: string } };
      return { status: String(response.status), ms: performance.now() - sent, id: answer.data?.id };
    } catch (error) {
      return { status: `error: ${(error as Error).message}`, ms: performance.now() - sent, id: undefined };
    }
  }),
);
const wallMs = performance.now() - started;

const tally: Record<string, number> = {};
for (const result of results) tally[result.status] = (tally[result.status] ?? 0) + 1;
const latencies = results.map((result) => result.ms).sort((a, b) => a - b);
const at = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor((p / 100) * latencies.length))]!;
const ids = new Set(results.map((result) => result.id).filter(Boolean));
const wallet = (await (await fetch(`${api}/api/v1/wallet`, { headers })).json()) as {
  data: { available_minor: number; pending_minor: number };
};

console.log(
  `${count} concurrent identical POST /api/v1/transfers (${values['idempotency-key'] ? 'one Idempotency-Key' : 'one reference'})`,
);
console.log(`status codes: ${JSON.stringify(tally)}`);
console.log(`distinct transfer ids: ${ids.size}`);
console.log(
  `latency ms: p50 ${at(50).toFixed(0)}, p90 ${at(90).toFixed(0)}, p99 ${at(99).toFixed(0)}, max ${latencies.at(-1)!.toFixed(0)}; all answered in ${wallMs.toFixed(0)}`,
);
console.log(
  `wallet after: available ${wallet.data.available_minor}, pending ${wallet.data.pending_minor} (started at 10000000; one transfer of 1000000 + 2500 fee)`,
);
