// When each API key was last used (decisions §19, `last_used_at`), written without a write per
// request: this process remembers when it last recorded each key, records a key at most once a
// minute, and batches what it records into one statement, after the request, off its path. A
// failed write is logged and forgotten (the next use a minute later writes again); across replicas
// the statement itself skips a key written less than a minute ago.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { FastifyBaseLogger } from 'fastify';
import { markKeysUsed } from './tenants.ts';

export const KEY_USAGE_INTERVAL_MS = 60_000;

export class KeyUsage {
  private readonly recorded = new Map<string, number>();
  private pending = new Set<string>();
  private flushing = false;
  private readonly orm: MikroORM;
  private readonly log: FastifyBaseLogger;
  private readonly now: () => number;

  constructor(orm: MikroORM, log: FastifyBaseLogger, now: () => number = Date.now) {
    this.orm = orm;
    this.log = log;
    this.now = now;
  }

  /** The key was used now: recorded soon if this process has not recorded it in the last minute. */
  used(keyId: string): void {
    const now = this.now();
    const last = this.recorded.get(keyId);
    if (last !== undefined && now - last < KEY_USAGE_INTERVAL_MS) return;
    this.recorded.set(keyId, now);
    // Bounded: forget keys recorded long enough ago to be written again anyway.
    if (this.recorded.size > 50_000) {
      for (const [id, at] of this.recorded) if (now - at >= KEY_USAGE_INTERVAL_MS) this.recorded.delete(id);
    }
    this.pending.add(keyId);
    if (!this.flushing) {
      this.flushing = true;
      setImmediate(() => void this.record());
    }
  }

  private async record(): Promise<void> {
    const ids = [...this.pending];
    this.pending = new Set();
    try {
      await markKeysUsed(this.orm.em.fork(), ids);
    } catch (error) {
      this.log.warn({ err: error, keys: ids.length }, 'could not record when API keys were last used');
    } finally {
      this.flushing = false;
      if (this.pending.size > 0) {
        this.flushing = true;
        setImmediate(() => void this.record());
      }
    }
  }
}
