// API key → tenant, remembered for at most `ttlMs` (1 s by default), so that a read does not pay a
// database round trip for its key while a revoked key (or a tenant's changed features or limit)
// takes effect within that time on every API replica, with no message between them. Only keys
// that resolved are kept: a missing, unknown or revoked key is looked up every time, so guessing
// fills nothing. The cache is bounded: past `maxEntries` the least recently used key goes. It is
// keyed by the key's SHA-256 hash (what the database stores), never by the key itself. Concurrent
// requests with the same key while it is not cached share one lookup.
import { hashApiKey } from './api-keys.ts';
import type { KeyResolution } from './tenants.ts';

export interface KeyCacheOptions {
  ttlMs: number;
  maxEntries?: number;
  now?: () => number;
}

interface Entry {
  resolution: Promise<KeyResolution>;
  expiresAt: number;
}

export class ApiKeyCache {
  private readonly entries = new Map<string, Entry>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(options: KeyCacheOptions) {
    this.ttlMs = options.ttlMs;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  get size(): number {
    return this.entries.size;
  }

  /** The key's resolution: remembered if it resolved less than `ttlMs` ago, else `lookUp()`. */
  resolve(apiKey: string, lookUp: () => Promise<KeyResolution>): Promise<KeyResolution> {
    if (this.ttlMs <= 0) return lookUp();
    const hash = hashApiKey(apiKey);
    const now = this.now();
    const cached = this.entries.get(hash);
    this.entries.delete(hash);
    if (cached && cached.expiresAt > now) {
      // Most recently used last: the Map's order is the eviction order.
      this.entries.set(hash, cached);
      return cached.resolution;
    }
    const entry: Entry = { resolution: lookUp(), expiresAt: now + this.ttlMs };
    this.entries.set(hash, entry);
    const forget = () => {
      if (this.entries.get(hash) === entry) this.entries.delete(hash);
    };
    entry.resolution.then((resolution) => {
      if (!resolution.ok) forget();
    }, forget);
    while (this.entries.size > this.maxEntries) {
      const oldest = this.entries.keys().next().value as string;
      this.entries.delete(oldest);
    }
    return entry.resolution;
  }
}
