// Closed-loop load: `concurrency` callers each run `call` again as soon as it returns, for
// `durationMs`. Latencies of successful calls give p50/p99; failures are counted, never timed.
// Each point first runs WARM_UP_MS at its concurrency unmeasured, so that what it measures is that
// concurrency held, not the connections (HTTP, and PostgreSQL in the pool) it opens on its way there.
import { readFileSync } from 'node:fs';
import { Agent, request as httpRequest } from 'node:http';

export interface PointResult {
  concurrency: number;
  completed: number;
  failed: number;
  perSecond: number;
  p50Ms: number;
  p99Ms: number;
  /**
   * Milliseconds of CPU each completed call cost over the measured window, by process (absent when
   * the point was not metered, and in older results).
   */
  cpuMsPerCall?: Record<string, number>;
}

/**
 * Cumulative CPU time (ms) by process: what a metered point's calls cost, whichever process did the
 * work (the gateway's, Temporal's, PostgreSQL's and the load generator's alike). A key `name#id` is
 * one of several processes counted together as `name`; one that is gone at the second reading is
 * left out (its time went with it), one that is new counts from its start.
 */
export type CpuMeter = () => Record<string, number>;

/** How long each point runs at its concurrency before it measures. */
export const WARM_UP_MS = 1_000;

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

/** One live line per point on a terminal (rewritten in place), one final line otherwise. */
export function progress(label: string, totalMs: number): { tick(done: number): void; end(summary: string): void } {
  const started = Date.now();
  const live = process.stdout.isTTY;
  let last = 0;
  return {
    tick(done) {
      if (!live || Date.now() - last < 200) return;
      last = Date.now();
      const share = Math.min(1, (Date.now() - started) / totalMs);
      const bar = '#'.repeat(Math.round(share * 20)).padEnd(20, '.');
      process.stdout.write(`\r  ${label} [${bar}] ${done} done`);
    },
    end(summary) {
      process.stdout.write(`${live ? '\r\u001b[2K' : ''}  ${label}: ${summary}\n`);
    },
  };
}

/**
 * With a `meter`, the CPU it reads from the end of the warm-up to the last call's return, divided by
 * the calls completed: at a steady concurrency, work a call leaves behind (a transfer's submission
 * and settlement) is made up for by what the calls before the window left inside it.
 */
export async function runPoint(
  label: string,
  concurrency: number,
  durationMs: number,
  call: (n: number) => Promise<boolean>,
  meter?: CpuMeter,
): Promise<PointResult> {
  const latencies: number[] = [];
  let failed = 0;
  let sequence = 0;
  const bar = progress(`${label} c=${concurrency}`, WARM_UP_MS + durationMs);
  const started = performance.now() + WARM_UP_MS;
  const deadline = started + durationMs;
  let cpuBefore: Record<string, number> | undefined;
  const metering = meter
    ? setTimeout(() => {
        cpuBefore = meter();
      }, WARM_UP_MS)
    : undefined;
  const caller = async () => {
    while (performance.now() < deadline) {
      const at = performance.now();
      let ok: boolean;
      try {
        ok = await call(sequence++);
      } catch {
        ok = false;
      }
      if (at < started) continue;
      if (ok) latencies.push(performance.now() - at);
      else failed += 1;
      bar.tick(latencies.length);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, caller));
  const elapsedS = (performance.now() - started) / 1000;
  clearTimeout(metering);
  const cpuAfter = cpuBefore && meter?.();
  latencies.sort((a, b) => a - b);
  const result: PointResult = {
    concurrency,
    completed: latencies.length,
    failed,
    perSecond: latencies.length / elapsedS,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
  if (cpuBefore && cpuAfter && latencies.length > 0) {
    const perCall: Record<string, number> = {};
    for (const [key, ms] of Object.entries(cpuAfter)) {
      const name = key.split('#')[0]!;
      perCall[name] = (perCall[name] ?? 0) + (ms - (cpuBefore[key] ?? 0)) / latencies.length;
    }
    result.cpuMsPerCall = perCall;
  }
  bar.end(
    `${result.perSecond.toFixed(1)}/s, p50 ${result.p50Ms.toFixed(1)} ms, p99 ${result.p99Ms.toFixed(1)} ms` +
      (failed ? `, ${failed} failed` : ''),
  );
  return result;
}

/** Runs `calls` one at a time `count` times; the latency of each. */
export async function runSequential(label: string, count: number, call: () => Promise<void>): Promise<PointResult> {
  const latencies: number[] = [];
  const bar = progress(label, count);
  const started = performance.now();
  for (let i = 0; i < count; i += 1) {
    const at = performance.now();
    await call();
    latencies.push(performance.now() - at);
    bar.tick(i + 1);
  }
  const elapsedS = (performance.now() - started) / 1000;
  latencies.sort((a, b) => a - b);
  const result = {
    concurrency: 1,
    completed: count,
    failed: 0,
    perSecond: count / elapsedS,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
  };
  bar.end(`p50 ${result.p50Ms.toFixed(1)} ms, p90 ${percentile(latencies, 90).toFixed(1)} ms`);
  return result;
}

/** CPU time (ms) and resident memory (MiB) of a process, from /proc (Linux). */
export function processUsage(pid: number): { cpuMs: number; rssMiB: number } | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    // utime and stime are fields 14 and 15 of stat, in clock ticks (100 per second on Linux).
    const ticks = Number(fields[11]) + Number(fields[12]);
    const rss = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return { cpuMs: ticks * 10, rssMiB: rss ? Number(rss[1]) / 1024 : 0 };
  } catch {
    return undefined;
  }
}

/** Samples processes while a phase runs: CPU as a share of one core, and the highest RSS. */
export function sampler(pids: Record<string, number>) {
  const first = Object.fromEntries(Object.entries(pids).map(([name, pid]) => [name, processUsage(pid)]));
  const peak: Record<string, number> = {};
  const started = performance.now();
  const timer = setInterval(() => {
    for (const [name, pid] of Object.entries(pids)) {
      peak[name] = Math.max(peak[name] ?? 0, processUsage(pid)?.rssMiB ?? 0);
    }
  }, 500);
  return () => {
    clearInterval(timer);
    const seconds = (performance.now() - started) / 1000;
    return Object.fromEntries(
      Object.entries(pids).map(([name, pid]) => {
        const now = processUsage(pid);
        const before = first[name];
        const cpuPercent = now && before ? ((now.cpuMs - before.cpuMs) / 1000 / seconds) * 100 : Number.NaN;
        return [name, { cpuPercent, rssMiB: Math.max(peak[name] ?? 0, now?.rssMiB ?? 0) }];
      }),
    );
  };
}

/**
 * A POST over keep-alive connections with node:http: a load generator on the machine it measures
 * takes CPU from the gateway, and fetch spends several times what node:http does per request.
 */
export function keepAlivePoster(url: string, maxSockets: number) {
  const agent = new Agent({ keepAlive: true, maxSockets });
  const target = new URL(url);
  return {
    post(path: string, headers: Record<string, string>, body: string): Promise<{ status: number; body: string }> {
      return new Promise((resolve, reject) => {
        const request = httpRequest(
          {
            agent,
            host: target.hostname,
            port: target.port,
            path,
            method: 'POST',
            headers: { ...headers, 'content-length': Buffer.byteLength(body) },
          },
          (response) => {
            const chunks: Buffer[] = [];
            response.on('data', (chunk: Buffer) => chunks.push(chunk));
            response.on('end', () =>
              resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString() }),
            );
            response.on('error', reject);
          },
        );
        request.on('error', reject);
        request.end(body);
      });
    },
    close: () => agent.destroy(),
  };
}
