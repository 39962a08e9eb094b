// The chaos run's faults on the stack under `npm start`'s launcher (run with STACK_CHILD_EXIT=restart,
// so that the launcher starts a killed process again): SIGKILL of the API, the worker or the sandbox
// bank, and SIGSTOP … SIGCONT of PostgreSQL (the postmaster and every backend) or of Temporal's dev
// server. Processes are found through /proc under the launcher. Whatever is paused is continued
// by `resumeAll`, which every way out of the run calls before the stack is stopped.
import { descendantsOf } from '../bench/stack.ts';

export type Killable = 'api' | 'worker' | 'sandbox-bank';
export type Pausable = 'postgres' | 'temporal';

const SCRIPTS: Record<Killable, string> = {
  api: 'src/server.ts',
  worker: 'worker/main.ts',
  'sandbox-bank': 'src/sandbox-bank/server.ts',
};

function signal(pid: number, name: NodeJS.Signals): boolean {
  try {
    process.kill(pid, name);
    return true;
  } catch {
    return false; // gone meanwhile
  }
}

export class Faults {
  readonly launcherPid: number;
  private readonly paused = new Set<number>();
  constructor(launcherPid: number) {
    this.launcherPid = launcherPid;
  }

  /** The pid of the launcher's child running `what`, if one runs now. */
  pidOf(what: Killable): number | undefined {
    return descendantsOf(this.launcherPid).find(
      (info) => info.ppid === this.launcherPid && info.cmdline.includes(SCRIPTS[what]),
    )?.pid;
  }

  pidsOf(what: Pausable): number[] {
    return descendantsOf(this.launcherPid)
      .filter((info) => {
        const first = info.cmdline.split(' ')[0] ?? '';
        return what === 'temporal'
          ? info.cmdline.includes('server start-dev')
          : first.startsWith('postgres:') || /(^|\/)postgres$/.test(first);
      })
      .map((info) => info.pid);
  }

  /** SIGKILL; the pid killed, or undefined when the process was not running. */
  kill(what: Killable): number | undefined {
    const pid = this.pidOf(what);
    if (pid === undefined) return undefined;
    return signal(pid, 'SIGKILL') ? pid : undefined;
  }

  /** Waits (at most `timeoutMs`) until another process than `killed` runs `what` and `ready` says so. */
  async waitRestarted(
    what: Killable,
    killed: number,
    ready: () => Promise<boolean>,
    timeoutMs: number,
  ): Promise<boolean> {
    const deadline = Date.now() + timeoutMs;
    while (Date.now() < deadline) {
      const pid = this.pidOf(what);
      if (pid !== undefined && pid !== killed && (await ready())) return true;
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
    return false;
  }

  /**
   * SIGSTOP every process of `what`: parents first (a stopped postmaster forks no new backend), then
   * once more for any that started meanwhile; the number stopped.
   */
  pause(what: Pausable): number {
    for (let round = 0; round < 2; round += 1) {
      for (const pid of this.pidsOf(what)) {
        if (!this.paused.has(pid) && signal(pid, 'SIGSTOP')) this.paused.add(pid);
      }
    }
    return this.paused.size;
  }

  /** SIGCONT everything paused. */
  resumeAll(): void {
    for (const pid of this.paused) signal(pid, 'SIGCONT');
    this.paused.clear();
  }
}
