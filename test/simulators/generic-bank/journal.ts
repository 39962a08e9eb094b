// The test bank's memory: an append-only file of JSON lines in its data directory, one line per
// thing that happened (a transfer taken, settled, an account opened, a callback queued or tried).
// Each line is written and fsync'd before the bank answers the request that caused it, so a
// SIGKILL can lose an answer but never something the bank said it did. On start the lines are
// read back in order; a last line cut short by a crash mid-write is cut off the file, since the
// bank never answered for it.
import { closeSync, fsyncSync, mkdirSync, openSync, readFileSync, ftruncateSync, writeSync, existsSync } from 'node:fs';
import { join } from 'node:path';

export const JOURNAL_FILE = 'journal.jsonl';

export class Journal {
  readonly path: string;
  private fd: number | undefined;

  private constructor(path: string, fd: number) {
    this.path = path;
    this.fd = fd;
  }

  /** Opens (creating) the journal in `dataDir`; returns it with the entries it already holds, oldest first. */
  static open(dataDir: string): { journal: Journal; entries: unknown[] } {
    mkdirSync(dataDir, { recursive: true });
    const path = join(dataDir, JOURNAL_FILE);
    const text = existsSync(path) ? readFileSync(path, 'utf8') : '';
    const complete = text.lastIndexOf('\n') + 1;
    const entries: unknown[] = [];
    for (const line of text.slice(0, complete).split('\n')) {
      if (line.trim() === '') continue;
      try {
        entries.push(JSON.parse(line));
      } catch {
        // A line this bank did not write whole; nothing was answered for it.
      }
    }
    const fd = openSync(path, 'a+');
    if (complete < Buffer.byteLength(text, 'utf8')) {
      ftruncateSync(fd, Buffer.byteLength(text.slice(0, complete), 'utf8'));
      fsyncSync(fd);
    }
    return { journal: new Journal(path, fd), entries };
  }

  /** Writes one entry and waits for the disk to have it. */
  append(entry: unknown): void {
    if (this.fd === undefined) throw new Error('the journal is closed');
    writeSync(this.fd, `${JSON.stringify(entry)}\n`);
    fsyncSync(this.fd);
  }

  close(): void {
    if (this.fd === undefined) return;
    closeSync(this.fd);
    this.fd = undefined;
  }
}
