// The benchmark's outputs, all made from one run's results: the tables it prints, latest.md (the
// same tables as a page the docs link, docs/performance.md), and an SVG chart of throughput and
// p99 against concurrency for each measured path and its floor.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { COST_TARGETS, type TransferCost } from './cost.ts';
import type { PointResult } from './load.ts';

/** A path measured at each concurrency beside its floor, point for point. */
export interface Paired {
  gateway: PointResult[];
  floor: PointResult[];
}

/** What `npm run bench` writes to latest.json; fields of phases that did not run are absent. */
export interface BenchResults {
  machine: { cpus: number; model: string; memoryGiB: number; node: string };
  startedAt: string;
  /** The measured code: `git describe --always --dirty` (absent in results written before it was kept). */
  commit?: string;
  params: {
    durationMs: number;
    concurrencies: number[];
    phases: string[];
    e2eCount: number;
    batch: number;
    costCount: number;
  };
  create?: Paired;
  get?: Paired;
  /** The rate limits' count statement on one key's row, beside `select 1` on the same pool. */
  rateLimit?: Paired;
  cost?: TransferCost;
  e2e?: { gateway: PointResult; floor: PointResult };
  webhooks?: { deliveries: number; refused: number; perSecond: number; arrivingPerSecond: number; spanMs: number };
  jit?: { fundings: number; oneCardPerSecond: number; acrossCardsPerSecond: number };
  credits?: { credits: number; perSecond: number };
  authorizations?: Paired & {
    cards: number;
    /**
     * Per point, where the decisions' time went, from the API's histograms (absent in older
     * results): each figure the upper bound of the bucket holding that percentile, in ms.
     */
    waits?: DecisionWaits[];
  };
  /** One batch of one tenant (ms after the 202), beside the single-create throughput of the same run. */
  bulk?: {
    items: number;
    answerMs: number;
    reservedMs: number;
    submittedMs: number;
    settledMs: number;
    submittedPerSecond: number;
    settledPerSecond: number;
    singleCreatePerSecond: number;
  };
  /** Open event streams of one tenant, each event to all of them, beside the webhook path of the same events. */
  stream?: {
    streams: number;
    events: number;
    receipts: number;
    streamP50Ms: number;
    streamP99Ms: number;
    webhookP50Ms: number;
    webhookP99Ms: number;
  };
  ledger?: {
    postingsTotalMinor: number;
    balanced: boolean;
    verified: boolean;
    breaches: { name: string; breaches: number }[];
    /** How many checks `ledger verify` ran, over how many entries and transfers (absent in older results). */
    checks?: number;
    entries?: number;
    transfers?: number;
  };
  /** CPU (share of one core, averaged over the phase) and peak RSS per process, by phase. */
  usage?: Record<string, Record<string, { cpuPercent: number; rssMiB: number }>>;
}

/** One authorization point's decisions: their connection waits, lock waits and transactions (ms). */
export interface DecisionWaits {
  concurrency: number;
  decisions: number;
  connectionWait: { p50Ms: number; p99Ms: number };
  lockWait: { p50Ms: number; p99Ms: number };
  transaction: { p50Ms: number; p99Ms: number };
}

export interface Series {
  name: string;
  colour: string;
  dashed?: boolean;
  points: PointResult[];
}

export function table(rows: string[][]): string {
  // A row shorter than the header leaves its last cells empty.
  const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => (row[column] ?? '').length)));
  const line = (row: string[]) => `| ${widths.map((width, column) => (row[column] ?? '').padEnd(width)).join(' | ')} |`;
  return [
    line(rows[0]!),
    `|${widths.map((width) => '-'.repeat(width + 2)).join('|')}|`,
    ...rows.slice(1).map(line),
  ].join('\n');
}

const escape = (text: string) => text.replaceAll('&', '&amp;').replaceAll('<', '&lt;');

function panel(
  series: Series[],
  value: (point: PointResult) => number,
  title: string,
  unit: string,
  left: number,
): string {
  const width = 440;
  const height = 300;
  const margin = { top: 40, right: 20, bottom: 50, left: 70 };
  const concurrencies = [...new Set(series.flatMap((s) => s.points.map((p) => p.concurrency)))].sort((a, b) => a - b);
  // Log scales: the paths differ by orders of magnitude (a create against a read).
  const values = series.flatMap((s) => s.points.map(value)).filter((v) => Number.isFinite(v) && v > 0);
  const low = 10 ** Math.floor(Math.log10(Math.min(...values, 1)));
  const high = 10 ** Math.ceil(Math.log10(Math.max(...values, 10)));
  const x = (c: number) => {
    const span = Math.log2(concurrencies.at(-1)!) - Math.log2(concurrencies[0]!) || 1;
    return (
      left + margin.left + ((Math.log2(c) - Math.log2(concurrencies[0]!)) / span) * (width - margin.left - margin.right)
    );
  };
  const y = (v: number) =>
    margin.top +
    (1 - (Math.log10(v) - Math.log10(low)) / (Math.log10(high) - Math.log10(low))) *
      (height - margin.top - margin.bottom);
  const parts: string[] = [
    `<text x="${left + width / 2}" y="20" text-anchor="middle" font-size="14" font-weight="bold">${escape(title)}</text>`,
    `<line x1="${left + margin.left}" y1="${y(low)}" x2="${left + width - margin.right}" y2="${y(low)}" stroke="#888"/>`,
    `<line x1="${left + margin.left}" y1="${margin.top}" x2="${left + margin.left}" y2="${y(low)}" stroke="#888"/>`,
    `<text x="${left + width / 2}" y="${height - 10}" text-anchor="middle" font-size="12">concurrency</text>`,
    `<text x="${left + 15}" y="${height / 2}" font-size="12" transform="rotate(-90 ${left + 15} ${height / 2})" text-anchor="middle">${escape(unit)} (log scale)</text>`,
  ];
  for (const c of concurrencies) {
    parts.push(`<text x="${x(c)}" y="${y(low) + 18}" text-anchor="middle" font-size="11">${c}</text>`);
  }
  for (let v = low; v <= high; v *= 10) {
    parts.push(
      `<text x="${left + margin.left - 6}" y="${y(v) + 4}" text-anchor="end" font-size="11">${v}</text>`,
      `<line x1="${left + margin.left}" y1="${y(v)}" x2="${left + width - margin.right}" y2="${y(v)}" stroke="#eee"/>`,
    );
  }
  for (const s of series) {
    const points = s.points.filter((p) => Number.isFinite(value(p)) && value(p) > 0);
    const path = points.map((p) => `${x(p.concurrency).toFixed(1)},${y(value(p)).toFixed(1)}`).join(' ');
    parts.push(
      `<polyline fill="none" stroke="${s.colour}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''} points="${path}"/>`,
      ...points.map(
        (p) => `<circle cx="${x(p.concurrency).toFixed(1)}" cy="${y(value(p)).toFixed(1)}" r="3" fill="${s.colour}"/>`,
      ),
    );
  }
  return parts.join('\n');
}

export function chart(series: Series[], caption: string): string {
  const legend = series
    .map(
      (s, i) =>
        `<line x1="${90 + i * 210}" y1="322" x2="${120 + i * 210}" y2="322" stroke="${s.colour}" stroke-width="2"${s.dashed ? ' stroke-dasharray="6 4"' : ''}/>` +
        `<text x="${126 + i * 210}" y="326" font-size="12">${escape(s.name)}</text>`,
    )
    .join('\n');
  return [
    '<svg xmlns="http://www.w3.org/2000/svg" width="900" height="360" font-family="sans-serif">',
    '<rect width="900" height="360" fill="white"/>',
    panel(series, (p) => p.perSecond, 'Throughput', 'requests per second', 0),
    panel(series, (p) => p.p99Ms, 'p99 latency', 'milliseconds', 450),
    legend,
    `<text x="450" y="350" text-anchor="middle" font-size="11" fill="#555">${escape(caption)}</text>`,
    '</svg>',
    '',
  ].join('\n');
}

/** Each path at each concurrency beside its floor, with the ratios the targets are stated in. */
export function pathRows(results: BenchResults): string[][] {
  const rows = [['path', 'concurrency', 'gateway', 'floor', 'throughput ratio', 'p99 ratio']];
  const pairs = [
    ['POST /api/v1/transfers vs Update-with-Start', results.create],
    ['GET /api/v1/transfers/{id} vs hello world', results.get],
    ["rate limits' count (one key's row) vs one PostgreSQL round trip", results.rateLimit],
    ['card authorization decision vs one PostgreSQL round trip', results.authorizations],
  ] as const;
  for (const [name, pair] of pairs) {
    if (!pair) continue;
    pair.gateway.forEach((point, i) => {
      const base = pair.floor[i]!;
      rows.push([
        name,
        String(point.concurrency),
        `${point.perSecond.toFixed(1)}/s, p50 ${point.p50Ms.toFixed(0)} ms, p99 ${point.p99Ms.toFixed(0)} ms`,
        `${base.perSecond.toFixed(1)}/s, p99 ${base.p99Ms.toFixed(0)} ms`,
        `${(point.perSecond / base.perSecond).toFixed(2)}×`,
        `${(point.p99Ms / base.p99Ms).toFixed(2)}×`,
      ]);
    });
  }
  if (results.e2e) {
    const { gateway, floor } = results.e2e;
    rows.push([
      'create → transfer.settled received vs start → result',
      '1',
      `p50 ${gateway.p50Ms.toFixed(0)} ms, p99 ${gateway.p99Ms.toFixed(0)} ms`,
      `p50 ${floor.p50Ms.toFixed(0)} ms`,
      '',
      `p50 ${(gateway.p50Ms / floor.p50Ms).toFixed(2)}×`,
    ]);
  }
  return rows;
}

/** Milliseconds: two decimals below 1, one below 10. */
function ms(value: number): string {
  return value.toFixed(value < 1 ? 2 : value < 10 ? 1 : 0);
}

// Results written before the bench read each PostgreSQL process apart can hold a negative figure (a
// backend that ended within the point took its time with it): left out, as unknown.
const cpuTotal = (perCall: Record<string, number>) =>
  Object.values(perCall).reduce((sum, used) => sum + Math.max(0, used), 0);

/** A call's CPU: the total, then each process that used any, most first. */
function cpuCell(perCall: Record<string, number>): string {
  const parts = Object.entries(perCall)
    .filter(([, used]) => used >= 0.005)
    .sort(([, a], [, b]) => b - a);
  return `${ms(cpuTotal(perCall))} (${parts.map(([name, used]) => `${name} ${ms(used)}`).join(', ')})`;
}

/**
 * What each create and read cost in CPU, by process, beside its floor's: on a machine the points
 * keep busy, throughput is about the busy cores' milliseconds divided by these, so their ratio is the
 * throughput ratio the design allows whatever else the machine is doing.
 */
export function cpuRows(results: BenchResults): string[][] {
  const rows = [['path', 'concurrency', 'gateway: ms of CPU per call', 'floor: ms of CPU per call', 'floor ÷ gateway']];
  const pairs = [
    ['POST /api/v1/transfers vs Update-with-Start', results.create],
    ['GET /api/v1/transfers/{id} vs hello world', results.get],
  ] as const;
  for (const [name, pair] of pairs) {
    pair?.gateway.forEach((point, i) => {
      const base = pair.floor[i]?.cpuMsPerCall;
      if (!point.cpuMsPerCall || !base) return;
      rows.push([
        name,
        String(point.concurrency),
        cpuCell(point.cpuMsPerCall),
        cpuCell(base),
        `${(cpuTotal(base) / cpuTotal(point.cpuMsPerCall)).toFixed(2)}×`,
      ]);
    });
  }
  return rows;
}

/** Rates that have no floor, and each process's CPU and memory per phase. */
export function measureRows(results: BenchResults): string[][] {
  const rows = [['measure', 'figure']];
  if (results.webhooks) {
    rows.push(['webhook deliveries, first create to last delivery', `${results.webhooks.perSecond.toFixed(1)}/s`]);
    rows.push(['webhook deliveries, first delivery to last', `${results.webhooks.arrivingPerSecond.toFixed(1)}/s`]);
  }
  if (results.jit) {
    rows.push(['JIT fundings, one card', `${results.jit.oneCardPerSecond.toFixed(1)}/s`]);
    rows.push(['JIT fundings, 100 cards', `${results.jit.acrossCardsPerSecond.toFixed(1)}/s`]);
  }
  if (results.credits) rows.push(['virtual-account credits', `${results.credits.perSecond.toFixed(1)}/s`]);
  for (const [phase, byProcess] of Object.entries(results.usage ?? {})) {
    rows.push([
      `CPU / peak RSS in ${phase.split(':')[0]}`,
      Object.entries(byProcess)
        .map(([name, use]) => `${name} ${use.cpuPercent.toFixed(0)}% / ${use.rssMiB.toFixed(0)} MiB`)
        .join(', '),
    ]);
  }
  return rows;
}

/** The bulk phase as table rows: its stages, and its rates beside single creates. */
export function bulkRows(bulk: NonNullable<BenchResults['bulk']>): string[][] {
  const ratio = bulk.singleCreatePerSecond > 0 ? bulk.submittedPerSecond / bulk.singleCreatePerSecond : undefined;
  return [
    [`one batch of ${bulk.items}, one tenant`, 'figure', 'target'],
    ['POST /api/v1/transfers/bulk answered (202)', `${bulk.answerMs} ms`, ''],
    ['every item reserved, after the answer', `${bulk.reservedMs} ms`, 'within 2,000 ms'],
    ['every item submitted to the bank, after the answer', `${bulk.submittedMs} ms`, ''],
    ['every item settled, after the answer', `${bulk.settledMs} ms`, ''],
    ['items submitted per second (from the request)', `${bulk.submittedPerSecond.toFixed(1)}/s`, ''],
    [
      'single creates per second, best point of this run',
      bulk.singleCreatePerSecond > 0 ? `${bulk.singleCreatePerSecond.toFixed(1)}/s` : 'create phase not run',
      '',
    ],
    ['submitted ÷ single-create throughput', ratio === undefined ? '' : `${ratio.toFixed(1)}×`, '5× or more'],
    ['items settled per second (from the request)', `${bulk.settledPerSecond.toFixed(1)}/s`, ''],
  ];
}

/** The authorization points' decisions, by where their time went (the API's histograms). */
export function decisionWaitRows(waits: readonly DecisionWaits[]): string[][] {
  const cell = (figure: { p50Ms: number; p99Ms: number }) => `p50 ≤ ${figure.p50Ms} ms, p99 ≤ ${figure.p99Ms} ms`;
  return [
    ['concurrency', 'decisions', 'lock waits per decision', 'connection wait', 'transaction (connection to commit)'],
    ...waits.map((point) => [
      String(point.concurrency),
      String(point.decisions),
      cell(point.lockWait),
      cell(point.connectionWait),
      cell(point.transaction),
    ]),
  ];
}

/** The stream phase as table rows: from an event's transaction to its receipt, by stream and by webhook. */
export function streamRows(stream: NonNullable<BenchResults['stream']>): string[][] {
  return [
    [`${stream.events} transfer.settled events, one tenant`, 'p50', 'p99'],
    [
      `event stream: each event on all ${stream.streams} streams (${stream.receipts} receipts)`,
      `${stream.streamP50Ms} ms`,
      `${stream.streamP99Ms} ms`,
    ],
    ['webhook: the same events, one endpoint', `${stream.webhookP50Ms} ms`, `${stream.webhookP99Ms} ms`],
  ];
}

/** A count's target as its cell: the target, marked when the count is over it. */
function within(count: number, target: number): string {
  return count > target ? `${target} (OVER)` : String(target);
}

/** The cost of one transfer as table rows, each count beside its target where it has one. */
export function costRows(cost: TransferCost): string[][] {
  const rows = [[`one transfer (mean of ${cost.transfers})`, 'count', 'at most']];
  const { temporal: t, providerCalls: calls, database: db } = cost;
  rows.push(['Temporal history events', String(t.historyEvents), within(t.historyEvents, COST_TARGETS.historyEvents)]);
  rows.push([
    'Temporal server writes (start, task started/completed, activity started/finished, signal)',
    String(t.serverWrites),
    within(t.serverWrites, COST_TARGETS.serverWrites),
  ]);
  rows.push([
    'workflow tasks / activity tasks / local activities',
    `${t.workflowTasks} / ${t.activityTasks} / ${t.localActivities}`,
    `${within(t.workflowTasks, COST_TARGETS.workflowTasks)} / ${within(t.activityTasks, COST_TARGETS.activityTasks)} / –`,
  ]);
  rows.push(['signals / updates', `${t.signals} / ${t.updates}`]);
  rows.push([
    'provider calls: name enquiry / submission / status query',
    `${calls.nameEnquiry} / ${calls.submit} / ${calls.statusQuery}`,
  ]);
  if (db) {
    rows.push([
      'PostgreSQL statements (idle poll taken out)',
      String(db.statementsPerTransfer),
      within(db.statementsPerTransfer, COST_TARGETS.statementsPerTransfer),
    ]);
    rows.push([
      'statements by kind',
      Object.entries(db.byKind)
        .map(([kind, n]) => `${kind} ${n}`)
        .join(', '),
    ]);
    rows.push(['transactions (commits)', String(db.transactionsPerTransfer)]);
    rows.push([
      'rows written',
      String(db.rowsWrittenPerTransfer),
      within(db.rowsWrittenPerTransfer, COST_TARGETS.rowsWrittenPerTransfer),
    ]);
    rows.push([
      'rows written by table',
      Object.entries(db.rowsWrittenByTable)
        .sort((a, b) => b[1] - a[1])
        .map(([name, n]) => `${name} ${n}`)
        .join(', '),
    ]);
    rows.push(["the sandbox bank's own statements", String(db.sandboxBankStatementsPerTransfer)]);
    rows.push(['idle statements per second (fan-out poll)', String(db.idleStatementsPerSecond)]);
  } else {
    rows.push(['PostgreSQL statements', 'not counted: pg_stat_statements is not loaded']);
  }
  return rows;
}

/** The ledger's verdict at the end of the run, in one sentence. */
export function ledgerLine(ledger: NonNullable<BenchResults['ledger']>): string {
  const sum = `every posting sums to ${ledger.postingsTotalMinor} kobo${ledger.balanced ? '' : ' — NOT BALANCED'}`;
  const over =
    ledger.entries === undefined ? '' : ` over ${ledger.entries} entries and ${ledger.transfers ?? '?'} transfers`;
  const checks = ledger.checks === undefined ? 'its checks' : `all ${ledger.checks} checks`;
  return ledger.verified
    ? `${sum}; \`ledger verify\`: ${checks} pass${over}`
    : `${sum}; \`ledger verify\` BREACHED: ${ledger.breaches.map((check) => `${check.name} (${check.breaches})`).join(', ')}${over}`;
}

/**
 * latest.md: the run's tables as a page. Written by every run beside latest.json (its source) and
 * latest.svg, so the docs link the latest figures instead of copying them.
 */
export function markdownReport(results: BenchResults, files: { svg: boolean }): string {
  const { machine, params } = results;
  const lines = [
    '# Benchmark: the latest run',
    '',
    '<!-- Written by `npm run bench` (test/bench/report.ts) from latest.json; a new run replaces it. -->',
    '',
    `- **When**: ${results.startedAt}`,
    `- **Code**: ${results.commit ? `\`${results.commit}\`` : 'not recorded (results written before the bench kept it)'}`,
    `- **Machine**: ${machine.cpus} × ${machine.model}, ${machine.memoryGiB} GiB, Node ${machine.node}; the load generator on the same machine`,
    `- **Parameters**: ${params.durationMs / 1000} s per point, concurrency ${params.concurrencies.join(', ')}; phases ${params.phases.join(', ')}`,
  ];
  if (results.ledger) lines.push(`- **Ledger at the end**: ${ledgerLine(results.ledger)}`);
  lines.push(
    '',
    'Compare ratios, not absolute figures: the floors run on the same machine and servers in the same run,',
    'so a busier or slower machine moves both. What each path is compared with, and the targets:',
    '[docs/performance.md](../../../docs/performance.md).',
  );
  const paths = pathRows(results);
  if (paths.length > 1) lines.push('', '## Paths against their floors', '', table(paths));
  if (files.svg) lines.push('', '![throughput and p99 against concurrency](latest.svg)');
  const cpu = cpuRows(results);
  if (cpu.length > 1) {
    lines.push(
      '',
      '## CPU per call',
      '',
      'Milliseconds of CPU each completed call cost over its point, by process (from `/proc`; `bench` is the load',
      "generator, and the floor's worker for Update-with-Start). Steadier than throughput on a shared machine.",
      '',
      table(cpu),
    );
  }
  const measures = measureRows(results);
  if (measures.length > 1) lines.push('', '## Rates and resources', '', table(measures));
  if (results.bulk) lines.push('', '## Bulk transfers', '', table(bulkRows(results.bulk)));
  if (results.stream) lines.push('', '## Event stream and webhooks', '', table(streamRows(results.stream)));
  if (results.authorizations?.waits) {
    lines.push('', '## Card authorization decisions', '', table(decisionWaitRows(results.authorizations.waits)));
  }
  if (results.cost) {
    lines.push('', '## What one transfer costs', '', table(costRows(results.cost)));
    if (results.cost.lastHistory?.length) {
      lines.push('', "The last transfer's history, event by event:", '');
      lines.push(results.cost.lastHistory.map((event, n) => `${n + 1}. ${event}`).join('\n'));
    }
  }
  lines.push('');
  return lines.join('\n');
}

/** The chart's lines: creates and reads, each beside its floor. */
function chartSeries(results: BenchResults): Series[] {
  const series: Series[] = [];
  if (results.create) {
    series.push({ name: 'POST /api/v1/transfers', colour: '#d62728', points: results.create.gateway });
    series.push({ name: 'floor: Update-with-Start', colour: '#d62728', dashed: true, points: results.create.floor });
  }
  if (results.get) {
    series.push({ name: 'GET /api/v1/transfers/{id}', colour: '#1f77b4', points: results.get.gateway });
    series.push({ name: 'floor: Fastify hello', colour: '#1f77b4', dashed: true, points: results.get.floor });
  }
  return series;
}

/** Writes latest.json, latest.md and (when creates or reads ran) latest.svg into `out`; returns their names. */
export function writeResults(out: string, results: BenchResults): string[] {
  mkdirSync(out, { recursive: true });
  writeFileSync(join(out, 'latest.json'), `${JSON.stringify(results, null, 2)}\n`);
  const series = chartSeries(results);
  if (series.length) {
    const { machine, startedAt, params } = results;
    const caption = `${machine.cpus} × ${machine.model}, ${startedAt.slice(0, 10)}, ${params.durationMs / 1000} s per point`;
    writeFileSync(join(out, 'latest.svg'), chart(series, caption));
  }
  writeFileSync(join(out, 'latest.md'), markdownReport(results, { svg: series.length > 0 }));
  return ['latest.json', 'latest.md', ...(series.length ? ['latest.svg'] : [])];
}
