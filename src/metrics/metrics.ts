// Prometheus metrics of the API process (prom-client), served on their own address
// (METRICS_HOST:METRICS_PORT, see src/metrics/server.ts), never beside the tenant routes.
//
// Two kinds:
//   - what this process sees: HTTP requests by route, method and status with latency histograms,
//     the create latency by outcome, requests let through uncounted by the rate limits, where each
//     card authorization decision's time went (its connection wait, its lock waits, its
//     transaction), the database pool in use, Node's own process metrics;
//   - what the books say, read from PostgreSQL at each scrape, so that every replica reports the
//     same truth and a restart loses nothing: transfers by status (count and kobo) and stuck,
//     webhook attempts by outcome and delivery latency from event to first 2xx (last hour),
//     fan-out lag, card operations by kind and outcome, refused card loads left unrecovered (an
//     alert: `admin cards alerts`), connector conflicts (decisions §17), and the system accounts'
//     balances.
// A scrape that cannot reach PostgreSQL still answers, with `gateway_metrics_database_up 0`.
import type { MikroORM } from '@mikro-orm/postgresql';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';

export interface GatewayMetrics {
  registry: Registry;
  observeRequest(labels: { route: string; method: string; status: number }, seconds: number): void;
  observeCreate(outcome: 'created' | 'repeated' | 'refused' | 'error', seconds: number): void;
  /** A request went on without its rate limit counted: the counter (PostgreSQL) did not answer. */
  countUncountedRequest(policy: string): void;
  /** One card authorization decision: its wait for a connection, its lock waits, its transaction (ms). */
  observeCardDecision(timing: { connectionWaitMs: number; lockWaitMs: number; transactionMs: number }): void;
  /** The exposition text (what GET /metrics answers). */
  scrape(): Promise<string>;
  /** A gauge of this process read at each scrape (the open event streams). */
  watch(name: string, help: string, read: () => number): void;
}

const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];
/** Finer at the low end: a card decision's lock waits are mostly under a millisecond. */
const WAIT_BUCKETS = [0.0001, 0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5];

export function createMetrics(orm: MikroORM): GatewayMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'gateway_api_' });

  const requests = new Counter({
    name: 'gateway_http_requests_total',
    help: 'HTTP requests answered, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'],
    registers: [registry],
  });
  const requestSeconds = new Histogram({
    name: 'gateway_http_request_duration_seconds',
    help: 'HTTP request latency, by route pattern, method and status',
    labelNames: ['route', 'method', 'status'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const createSeconds = new Histogram({
    name: 'gateway_transfer_create_duration_seconds',
    help: 'POST /api/v1/transfers latency, by outcome (created, repeated, refused, error)',
    labelNames: ['outcome'],
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  // The decision's parts (src/cards/decision.ts, DecisionTiming): `npm run bench` prints them per point.
  const decisionHistogram = (name: string, help: string) =>
    new Histogram({ name, help, buckets: WAIT_BUCKETS, registers: [registry] });
  const decisionConnectionWait = decisionHistogram(
    'gateway_card_decision_connection_wait_seconds',
    "Card authorization decisions: time waiting for a connection of the API's pool",
  );
  const decisionLockWait = decisionHistogram(
    'gateway_card_decision_lock_wait_seconds',
    'Card authorization decisions: time in PostgreSQL until the decision held its locks (advisory, card row, accounts)',
  );
  const decisionTransaction = decisionHistogram(
    'gateway_card_decision_transaction_seconds',
    'Card authorization decisions: the transaction, from its connection to its commit (lock waits included)',
  );
  const uncounted = new Counter({
    name: 'gateway_rate_limit_uncounted_total',
    help: 'Requests let through without their rate limit counted (the shared counter in PostgreSQL did not answer), by policy',
    labelNames: ['policy'],
    registers: [registry],
  });

  const em = () => orm.em.fork();
  const sql = <T extends object>(query: string) => em().execute<T[]>(query);

  /** A gauge of this registry, set at each scrape. */
  const gauge = <Label extends string>(name: string, help: string, labelNames: readonly Label[] = []) =>
    new Gauge<Label>({ name, help, labelNames, registers: [registry] });
  const databaseUp = gauge(
    'gateway_metrics_database_up',
    '1 when the last scrape read the books from PostgreSQL, 0 when it could not',
  );
  const transfers = gauge('gateway_transfers', 'Transfers by status (pending, processing, completed, failed)', [
    'status',
  ]);
  const transferAmounts = gauge('gateway_transfers_amount_minor', 'Sum of transfer amounts in kobo, by status', [
    'status',
  ]);
  const stuck = gauge('gateway_transfers_stuck', 'Transfers processing and flagged stuck (unconfirmed after 24 h)');
  const stuckAmount = gauge('gateway_transfers_stuck_amount_minor', 'Sum of the stuck transfers amounts in kobo');
  const attempts = gauge(
    'gateway_webhook_attempts',
    'Webhook delivery attempts by outcome (succeeded: 2xx; gone: 410; failed: anything else), test events aside',
    ['outcome'],
  );
  const deliveryLatency = gauge(
    'gateway_webhook_delivery_latency_seconds',
    'From an event to its delivery first answered 2xx, over deliveries first answered in the last hour',
    ['quantile'],
  );
  const fanoutLag = gauge(
    'gateway_fanout_lag_seconds',
    'Age of the oldest event not yet fanned out to its deliveries (0 when none waits)',
  );
  const cardOperations = gauge('gateway_card_operations', 'Card operations by kind and outcome', ['kind', 'status']);
  const refusedLoads = gauge(
    'gateway_card_refused_loads_unrecovered',
    'Card loads the processor refused after purchases had spent their money (admin cards alerts): count',
  );
  const refusedLoadsMinor = gauge(
    'gateway_card_refused_loads_unrecovered_minor',
    'What those refused loads could not return to the wallet, in kobo',
  );
  const systemBalances = gauge('gateway_ledger_system_balance_minor', 'Balance in kobo of each system account', [
    'account',
    'currency',
  ]);
  // A counter read from the books: every connector conflict ever recorded, on every replica alike.
  const connectorConflicts = new Counter({
    name: 'gateway_connector_conflicts_total',
    help:
      'Answers about a transfer from a connector that does not hold it (decisions §17), kept as connector ' +
      'conflicts (admin transfers discrepancies), by the holder and the connector that answered',
    labelNames: ['holder', 'connector'],
    registers: [registry],
  });
  const pool = gauge(
    'gateway_db_pool_connections',
    'The API process database pool: total, idle, and requests waiting for a connection',
    ['state'],
  );

  async function readBooks(): Promise<void> {
    const [byStatus, stuckRows, attemptRows, latencyRows, lagRows, cardRows, systemRows, refusedRows, conflictRows] =
      await Promise.all([
        sql<{ status: string; n: string; amount: string }>(
          'select status, count(*)::text as n, coalesce(sum(amount_minor), 0)::text as amount from transfers group by status',
        ),
        sql<{ n: string; amount: string }>(
          `select count(*)::text as n, coalesce(sum(amount_minor), 0)::text as amount from transfers
          where status = 'processing' and stuck_since is not null`,
        ),
        sql<{ outcome: string; n: string }>(
          `select case when a.status_code between 200 and 299 then 'succeeded' when a.status_code = 410 then 'gone'
                     else 'failed' end as outcome, count(*)::text as n
           from webhook_attempts a join webhook_deliveries d on d.id = a.delivery_id and not d.test group by 1`,
        ),
        sql<{ p50: number | null; p99: number | null }>(
          `with first_success as (
           select d.id, min(a.attempted_at) as at, e.created_at as event_at
             from webhook_deliveries d
             join webhook_attempts a on a.delivery_id = d.id and a.status_code between 200 and 299 and not d.test
             join events e on e.id = d.event_id
            group by d.id, e.created_at)
         select percentile_cont(0.5) within group (order by extract(epoch from at - event_at)) as p50,
                percentile_cont(0.99) within group (order by extract(epoch from at - event_at)) as p99
           from first_success where at > now() - interval '1 hour'`,
        ),
        sql<{ lag: number | null }>(
          'select extract(epoch from now() - min(created_at))::float8 as lag from events where fanned_out_at is null',
        ),
        sql<{ kind: string; status: string; n: string }>(
          'select action as kind, status, count(*)::text as n from card_operations group by action, status',
        ),
        sql<{ code: string; currency: string; balance: string }>(
          'select code, currency, balance_minor::text as balance from ledger_accounts where tenant_id is null',
        ),
        // On the partial index card_fundings_unrecovered_idx: only such fundings are read.
        sql<{ n: string; amount: string }>(
          `select count(*)::text as n, coalesce(sum(unrecovered_minor), 0)::text as amount
           from card_fundings where unrecovered_minor > 0`,
        ),
        sql<{ holder: string; connector: string; n: string }>(
          'select holder, connector, count(*)::text as n from transfer_connector_conflicts group by holder, connector',
        ),
      ]);
    transfers.reset();
    transferAmounts.reset();
    for (const status of ['pending', 'processing', 'completed', 'failed']) {
      const row = byStatus.find((candidate) => candidate.status === status);
      transfers.set({ status }, Number(row?.n ?? 0));
      transferAmounts.set({ status }, Number(row?.amount ?? 0));
    }
    stuck.set(Number(stuckRows[0]?.n ?? 0));
    stuckAmount.set(Number(stuckRows[0]?.amount ?? 0));
    attempts.reset();
    for (const outcome of ['succeeded', 'failed', 'gone']) {
      attempts.set({ outcome }, Number(attemptRows.find((row) => row.outcome === outcome)?.n ?? 0));
    }
    deliveryLatency.reset();
    if (latencyRows[0]?.p50 !== null && latencyRows[0]?.p50 !== undefined) {
      deliveryLatency.set({ quantile: '0.5' }, Number(latencyRows[0].p50));
      deliveryLatency.set({ quantile: '0.99' }, Number(latencyRows[0].p99));
    }
    fanoutLag.set(Math.max(0, Number(lagRows[0]?.lag ?? 0)));
    cardOperations.reset();
    for (const row of cardRows) cardOperations.set({ kind: row.kind, status: row.status }, Number(row.n));
    refusedLoads.set(Number(refusedRows[0]?.n ?? 0));
    refusedLoadsMinor.set(Number(refusedRows[0]?.amount ?? 0));
    connectorConflicts.reset();
    for (const row of conflictRows) {
      connectorConflicts.inc({ holder: row.holder, connector: row.connector }, Number(row.n));
    }
    systemBalances.reset();
    for (const row of systemRows)
      systemBalances.set({ account: row.code, currency: row.currency }, Number(row.balance));
  }

  async function readPool(): Promise<void> {
    const native = (await em().getConnection().getNativeClient()) as {
      totalCount: number;
      idleCount: number;
      waitingCount: number;
    };
    pool.set({ state: 'total' }, native.totalCount);
    pool.set({ state: 'idle' }, native.idleCount);
    pool.set({ state: 'waiting' }, native.waitingCount);
  }

  return {
    registry,
    observeRequest({ route, method, status }, seconds) {
      const labels = { route, method, status: String(status) };
      requests.inc(labels);
      requestSeconds.observe(labels, seconds);
    },
    observeCreate(outcome, seconds) {
      createSeconds.observe({ outcome }, seconds);
    },
    countUncountedRequest(policy) {
      uncounted.inc({ policy });
    },
    observeCardDecision({ connectionWaitMs, lockWaitMs, transactionMs }) {
      decisionConnectionWait.observe(connectionWaitMs / 1000);
      decisionLockWait.observe(lockWaitMs / 1000);
      decisionTransaction.observe(transactionMs / 1000);
    },
    async scrape() {
      try {
        await Promise.all([readBooks(), readPool()]);
        databaseUp.set(1);
      } catch {
        databaseUp.set(0);
      }
      return registry.metrics();
    },
    watch(name, help, read) {
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(read());
        },
      });
    },
  };
}
