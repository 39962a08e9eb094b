// What an earlier `npm start` of this checkout leaves running when it is killed with SIGKILL (it
// cannot stop its children then): its PostgreSQL (on the same data directory), its Temporal dev
// server (on the same database file), and its API, worker and sandbox bank (this checkout's
// scripts, started for the same data directory). They are found through /proc, told apart from a
// stack that is still running (whose launcher is alive: then the new start stops, saying so), and
// stopped before the new start, one line each. A stack of the same checkout on another data
// directory (the benchmark's, the tests') is neither. Also: whether the ports the stack needs are free, named by the variable that moves them.
import { readFileSync, readdirSync, readlinkSync } from 'node:fs';
import { createServer } from 'node:net';
import { join, resolve } from 'node:path';

export interface StackProcess {
  pid: number;
  what: string;
}

export interface ProcessInfo {
  pid: number;
  ppid: number;
  /** Its arguments, paths made absolute against its working directory (npm runs `node src/…`). */
  argv: string[];
  /** The data directory it was started for (DATA_DIR in its environment, else `.data` in its cwd). */
  dataDir: string | undefined;
}

/** Every process this user may see, from /proc (also the benchmark's way to find its stack's processes). */
export function processes(): ProcessInfo[] {
  const found: ProcessInfo[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').filter(Boolean);
      let cwd: string | undefined;
      try {
        cwd = readlinkSync(`/proc/${entry}/cwd`);
      } catch {
        // not ours to read
      }
      const absolute = (arg: string) => (cwd && /^[^-/].*\.ts$/.test(arg) ? resolve(cwd, arg) : arg);
      let dataDir: string | undefined;
      try {
        const environ = readFileSync(`/proc/${entry}/environ`, 'utf8').split('\0');
        const set = environ.find((variable) => variable.startsWith('DATA_DIR='))?.slice('DATA_DIR='.length);
        dataDir = cwd ? resolve(cwd, set || '.data') : undefined;
      } catch {
        // not ours to read
      }
      found.push({ pid: Number(entry), ppid, argv: argv.map(absolute), dataDir });
    } catch {
      // gone meanwhile, or not ours to read
    }
  }
  return found;
}

const valueAfter = (argv: string[], flag: string) => {
  const at = argv.indexOf(flag);
  return at >= 0 ? argv[at + 1] : undefined;
};

export interface StackFiles {
  projectRoot: string;
  /** This start's data directory: the API, worker and sandbox bank of another one are not ours. */
  dataDir: string;
  /** Embedded PostgreSQL's data directory, when this start uses one. */
  postgresDataDir?: string;
  /** The Temporal dev server's database file, when this start runs one. */
  temporalDbFile?: string;
}

/** This checkout's stack processes, and the launcher that runs them if one is alive. */
export function stackProcesses(files: StackFiles): { leftovers: StackProcess[]; runningLauncher?: number } {
  const all = processes();
  const byPid = new Map(all.map((info) => [info.pid, info]));
  const launcherScript = join(files.projectRoot, 'src/stack/start.ts');
  const isLauncher = (pid: number) => byPid.get(pid)?.argv.includes(launcherScript) === true;
  const scripts: Record<string, string> = {
    [join(files.projectRoot, 'src/server.ts')]: 'API',
    [join(files.projectRoot, 'worker/main.ts')]: 'worker',
    [join(files.projectRoot, 'worker/webhooks.ts')]: 'webhook worker',
    [join(files.projectRoot, 'src/sandbox-bank/server.ts')]: 'sandbox bank',
  };
  const leftovers: StackProcess[] = [];
  let runningLauncher: number | undefined;
  for (const info of all) {
    if (info.pid === process.pid) continue;
    let what: string | undefined;
    const script = info.argv.find((arg) => scripts[arg] !== undefined);
    if (script && info.dataDir === resolve(files.dataDir)) what = scripts[script];
    else if (
      files.postgresDataDir &&
      info.argv[0]?.endsWith('/postgres') &&
      resolve(valueAfter(info.argv, '-D') ?? '/nonexistent') === resolve(files.postgresDataDir)
    ) {
      what = 'PostgreSQL';
    } else if (
      files.temporalDbFile &&
      info.argv.includes('start-dev') &&
      resolve(valueAfter(info.argv, '--db-filename') ?? '/nonexistent') === resolve(files.temporalDbFile)
    ) {
      what = 'Temporal dev server';
    }
    if (!what) continue;
    // A child of a launcher that is still alive belongs to a running stack, not to a dead one.
    if (isLauncher(info.ppid)) runningLauncher = info.ppid;
    else leftovers.push({ pid: info.pid, what });
  }
  return runningLauncher === undefined ? { leftovers } : { leftovers, runningLauncher };
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Stops each leftover: SIGINT for PostgreSQL (a fast, clean shutdown), SIGTERM for the rest, then SIGKILL. */
export async function stopLeftovers(leftovers: StackProcess[], graceMs = 20_000): Promise<void> {
  // The API and worker first, while PostgreSQL and Temporal are still there for them.
  const order = (p: StackProcess) => (p.what === 'PostgreSQL' ? 2 : p.what === 'Temporal dev server' ? 1 : 0);
  for (const rank of [0, 1, 2]) {
    const group = leftovers.filter((p) => order(p) === rank);
    for (const p of group) {
      try {
        process.kill(p.pid, p.what === 'PostgreSQL' ? 'SIGINT' : 'SIGTERM');
      } catch {
        // already gone
      }
    }
    const deadline = Date.now() + graceMs;
    while (group.some((p) => alive(p.pid)) && Date.now() < deadline) {
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    for (const p of group.filter((candidate) => alive(candidate.pid))) {
      try {
        process.kill(p.pid, 'SIGKILL');
      } catch {
        // gone at last
      }
    }
  }
}

/** Whether nothing listens on host:port. */
export function portIsFree(port: number, host = '127.0.0.1'): Promise<boolean> {
  return new Promise((resolvePort) => {
    const server = createServer();
    server.once('error', () => resolvePort(false));
    server.listen({ port, host, exclusive: true }, () => server.close(() => resolvePort(true)));
  });
}

/** The first port of `ports` that is taken, with the variable that moves it. */
export async function takenPort(ports: { variable: string; port: number; host?: string }[]) {
  for (const entry of ports) {
    if (!(await portIsFree(entry.port, entry.host))) return entry;
  }
  return undefined;
}
