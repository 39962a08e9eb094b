// The event stream (decisions §15): `GET /api/v1/events/stream` sends each new event of the tenant
// as server-sent events, in stream order (./positions.ts), and resumes after `Last-Event-ID` with
// nothing lost or repeated, on any API replica, because the position is in the database.
//
// One hub per API process reads every tenant's released events after its cursor (a poll every
// 100 ms while anyone listens: a wake-up on PostgreSQL's notification would gain little, since an
// event waits for its older transactions anyway) and hands each to the streams of its tenant. A stream that resumes first reads its tenant's events from the
// database after its position, page by page, keeping what the hub hands it meanwhile (bounded: on
// overflow it drops them and reads the database again), then goes live. A stream skips anything at
// or before its position, so the two sources never send an event twice.
//
// Streams are a resource (decisions §15): at most `maxPerKey` open per API key across every API
// process (429 beyond), each holding a lease in the database (./stream-leases.ts) that its process
// renews while it is open and deletes when it ends; a dead process's leases lapse after `leaseMs`.
// Memory stays flat however many consumers stall: once `maxBufferBytes` wait unsent for a stream,
// nothing more is written to it (the database holds its events); when its client has taken them,
// it catches up from the database as a resuming stream does; a client that takes nothing for
// `stallMs` is disconnected. A comment every 15 s keeps idle connections open.
//
// A stream lasts only as long as the API key it was opened with (decisions §18): every read of
// events, the hub's and a catch-up's, says in the same statement which of the streams' keys are
// still neither revoked nor expired (./positions.ts), and a stream whose key is not is ended before
// anything of that read is sent to it. A snapshot that sees an event committed after a revocation
// sees the revocation too, so nothing recorded after it reaches the stream; and as the hub reads
// every 100 ms while anyone listens, an idle stream ends as soon as well.
import type { MikroORM } from '@mikro-orm/postgresql';
import { PollingLoop } from '../runtime/polling-loop.ts';
import { eventBody } from '../events/body.ts';
import {
  type ReleasedPage,
  type StreamPosition,
  type StreamedEvent,
  isAfter,
  releasedEvents,
  releasedTenantEvents,
  streamTail,
} from './positions.ts';
import { dropStreamLeases, renewStreamLeases, takeStreamLease } from './stream-leases.ts';

export interface EventStreamOptions {
  orm: MikroORM;
  /** Open streams per API key, across every API process (5). */
  maxPerKey?: number;
  /** How long a stream's lease on its place holds unless its process renews it (30 s; renewed every third of that). */
  leaseMs?: number;
  /** Bytes a stream may leave unsent before nothing more is written to it (256 KiB). */
  maxBufferBytes?: number;
  /** How long a stream at that bound waits for its client to read before it is disconnected (10 s). */
  stallMs?: number;
  /** A comment this often on every stream (15 s). */
  heartbeatMs?: number;
  pollMs?: number;
  log?: (message: string, fields?: Record<string, unknown>) => void;
}

/** Where a stream writes: the HTTP response, as much as Node's writable side of it. */
export interface StreamSink {
  write(chunk: string): boolean;
  readonly writableLength: number;
  /** True once the connection is gone: its `close` may have been emitted before anyone listened. */
  readonly destroyed: boolean;
  once(event: 'drain' | 'close', listener: () => void): unknown;
  off(event: 'drain' | 'close', listener: () => void): unknown;
  end(): void;
  destroy(): void;
}

const PAGE = 500;
/** Events a resuming stream keeps from the hub while it reads the database; past this it reads again. */
const MAX_HELD = 1_000;

/** The frame of one event. The body is JSON on one line, as SSE's `data:` needs. */
export function eventFrame(event: Pick<StreamedEvent, 'id' | 'type' | 'created_at' | 'payload'>): string {
  return `id: ${event.id}\nevent: ${event.type}\ndata: ${eventBody(event)}\n\n`;
}

type Read = (after: StreamPosition) => Promise<ReleasedPage>;

/** Why a stream ends when its key stops working. */
const KEY_GONE = 'API key revoked or expired';

class Stream {
  position: StreamPosition;
  /** Written to as events come; otherwise catching up from the database, keeping what comes meanwhile. */
  live = false;
  closed = false;
  private held: StreamedEvent[] = [];
  private overflowed = false;
  readonly tenantId: string;
  readonly keyId: string;
  private readonly sink: StreamSink;
  private readonly hub: EventStreamHub;
  private readonly read: Read;

  constructor(
    hub: EventStreamHub,
    tenantId: string,
    keyId: string,
    position: StreamPosition,
    sink: StreamSink,
    read: Read,
  ) {
    this.hub = hub;
    this.tenantId = tenantId;
    this.keyId = keyId;
    this.position = position;
    this.sink = sink;
    this.read = read;
  }

  /** An event from the hub: sent now when live, else kept for when the catch-up ends. */
  offer(event: StreamedEvent): void {
    if (this.closed) return;
    if (this.live) return this.send(event);
    if (this.held.length >= MAX_HELD) {
      this.overflowed = true;
      this.held = [];
      return;
    }
    this.held.push(event);
  }

  private send(event: StreamedEvent): void {
    if (this.closed || !isAfter(event.position, this.position)) return;
    this.sink.write(eventFrame(event));
    this.position = event.position;
    this.checkBound();
  }

  comment(text: string): void {
    if (this.closed) return;
    this.sink.write(`: ${text}\n\n`);
    this.checkBound();
  }

  /**
   * Past the bound, a live stream stops being written to: it waits for its client to read, then
   * catches up from the database (which holds every event it has not sent), or is disconnected.
   */
  private checkBound(): void {
    if (!this.live || this.sink.writableLength <= this.hub.maxBufferBytes) return;
    this.fallBack();
  }

  /**
   * The hub read events without asking about this stream's key (the stream opened meanwhile): it
   * is handed none of them, and reads them from the database itself, where its key is judged.
   */
  missed(): void {
    if (this.closed) return;
    if (this.live) return this.fallBack();
    this.overflowed = true;
    this.held = [];
  }

  /** Stops writing what the hub hands over and catches up from the database instead. */
  private fallBack(): void {
    this.live = false;
    this.overflowed = false;
    this.held = [];
    void this.catchUp();
  }

  /** Reads the tenant's events after its position from the database until it is level, then goes live. */
  async catchUp(): Promise<void> {
    try {
      while (!this.closed) {
        if (this.sink.writableLength > this.hub.maxBufferBytes / 2 && !(await this.drained())) {
          return this.close('slow consumer', true);
        }
        const page = await this.read(this.position);
        if (this.closed) return;
        if (!page.liveKeys.has(this.keyId)) return this.close(KEY_GONE);
        let full = false;
        for (const event of page.events) {
          if (this.closed || !isAfter(event.position, this.position)) continue;
          this.sink.write(eventFrame(event));
          this.position = event.position;
          // Past the bound nothing more is written, as to a live stream: the rest of the page is read
          // again once the client has taken what waits (dropped meanwhile, so memory stays flat).
          if (this.sink.writableLength > this.hub.maxBufferBytes) {
            full = true;
            break;
          }
        }
        if (this.closed) return;
        if (full || page.events.length === PAGE) continue;
        if (this.overflowed) {
          // The hub handed over more than could be kept: the database has them all.
          this.overflowed = false;
          continue;
        }
        const held = this.held;
        this.held = [];
        this.live = true;
        for (const event of held) this.send(event);
        return;
      }
    } catch (error) {
      this.hub.report('event stream catch-up failed; the client resumes from its last event', error);
      this.close('catch-up failed', true);
    }
  }

  /** Whether the client takes what waits for it within the hub's stall time. */
  private drained(): Promise<boolean> {
    return new Promise((resolve) => {
      const done = (ok: boolean) => {
        clearTimeout(timer);
        this.sink.off('drain', onDrain);
        this.sink.off('close', onClose);
        resolve(ok);
      };
      const onDrain = () => done(true);
      const onClose = () => done(false);
      const timer = setTimeout(() => done(false), this.hub.stallMs);
      this.sink.once('drain', onDrain);
      this.sink.once('close', onClose);
    });
  }

  close(reason: string, destroy = false): void {
    if (this.closed) return;
    this.closed = true;
    this.held = [];
    this.hub.forget(this, reason);
    if (destroy) this.sink.destroy();
    else this.sink.end();
  }
}

export class StreamLimitError extends Error {
  readonly limit: number;
  constructor(limit: number) {
    super(`at most ${limit} event streams may be open per API key: close one first`);
    this.name = 'StreamLimitError';
    this.limit = limit;
  }
}

export class EventStreamHub {
  readonly maxBufferBytes: number;
  readonly stallMs: number;
  private readonly options: EventStreamOptions;
  private readonly maxPerKey: number;
  private readonly streams = new Set<Stream>();
  private readonly byTenant = new Map<string, Set<Stream>>();
  private readonly leaseMs: number;
  /** The leases of this process's open streams (and of those about to open), renewed together. */
  private readonly leases = new Set<string>();
  /** Leases being given back; closing waits for them. */
  private readonly dropping = new Set<Promise<void>>();
  private renewal: NodeJS.Timeout | undefined;
  /** What gives back each open stream's place under its key. */
  private readonly releases = new Map<Stream, () => void>();
  private cursor: StreamPosition | undefined;
  private loop: PollingLoop | undefined;
  private heartbeat: NodeJS.Timeout | undefined;
  private closing = false;

  constructor(options: EventStreamOptions) {
    this.options = options;
    this.maxPerKey = options.maxPerKey ?? 5;
    this.leaseMs = options.leaseMs ?? 30_000;
    this.maxBufferBytes = options.maxBufferBytes ?? 262_144;
    this.stallMs = options.stallMs ?? 10_000;
  }

  report(message: string, error: unknown): void {
    this.options.log?.(message, { error: String(error) });
  }

  /** How many streams are open (metrics and tests). */
  get size(): number {
    return this.streams.size;
  }

  /**
   * Takes one of the key's stream places (a lease, whichever API process holds the others); throws
   * StreamLimitError when it has none left. Resolves to what gives the place back.
   */
  async reserve(keyId: string, tenantId: string): Promise<() => void> {
    const id = await takeStreamLease(
      this.options.orm.em.fork(),
      { keyId, tenantId },
      { perKey: this.maxPerKey, leaseMs: this.leaseMs },
    );
    if (!id) throw new StreamLimitError(this.maxPerKey);
    this.leases.add(id);
    this.renew();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.leases.delete(id);
      const drop = dropStreamLeases(this.options.orm.em.fork(), [id])
        .catch((error) => this.report('event stream lease not given back; it lapses', error))
        .finally(() => this.dropping.delete(drop));
      this.dropping.add(drop);
    };
  }

  /** Renews this process's leases every third of their life while it holds any. */
  private renew(): void {
    if (this.renewal) return;
    let renewing = false;
    this.renewal = setInterval(() => {
      if (this.leases.size === 0) {
        clearInterval(this.renewal);
        this.renewal = undefined;
        return;
      }
      if (renewing) return;
      renewing = true;
      renewStreamLeases(this.options.orm.em.fork(), [...this.leases], this.leaseMs)
        .catch((error) => this.report('event stream leases not renewed', error))
        .finally(() => (renewing = false));
    }, this.leaseMs / 3);
    this.renewal.unref();
  }

  /**
   * Opens a stream of the tenant's events after `after` (an event it was sent before), or of the
   * events from now on; resolves once it is registered. `release` gives back the key's place when
   * the stream ends.
   */
  async open(input: {
    tenantId: string;
    keyId: string;
    after: StreamPosition | null;
    sink: StreamSink;
    release: () => void;
    /** Starts the response, once the stream is registered: no event committed after it is missed. */
    begin: () => void;
  }): Promise<void> {
    if (this.closing) {
      input.release();
      input.begin();
      return input.sink.end();
    }
    this.start();
    this.cursor ??= await streamTail(this.options.orm.em.fork());
    const em = this.options.orm.em.fork();
    const stream = new Stream(this, input.tenantId, input.keyId, input.after ?? this.cursor, input.sink, (position) =>
      releasedTenantEvents(em, input.tenantId, position, PAGE, input.keyId),
    );
    this.streams.add(stream);
    let tenantStreams = this.byTenant.get(input.tenantId);
    if (!tenantStreams) this.byTenant.set(input.tenantId, (tenantStreams = new Set()));
    tenantStreams.add(stream);
    const onClose = () => stream.close('client went away');
    input.sink.once('close', onClose);
    this.releases.set(stream, () => {
      input.sink.off('close', onClose);
      input.release();
    });
    input.begin();
    // A client that left while the stream was being set up (its place taken, the tail read) emitted
    // `close` before anyone listened: without this, its place would be held, and its lease renewed,
    // for as long as this process lives.
    if (input.sink.destroyed) return stream.close('client went away');
    if (!input.after) {
      stream.live = true;
      return;
    }
    // Not awaited: the request is answered; the catch-up runs for as long as it takes.
    void stream.catchUp();
  }

  forget(stream: Stream, reason: string): void {
    this.streams.delete(stream);
    const tenantStreams = this.byTenant.get(stream.tenantId);
    tenantStreams?.delete(stream);
    if (tenantStreams?.size === 0) this.byTenant.delete(stream.tenantId);
    this.releases.get(stream)?.();
    this.releases.delete(stream);
    if (reason !== 'client went away') this.options.log?.('event stream closed', { reason, tenantId: stream.tenantId });
  }

  private start(): void {
    if (this.loop) return;
    this.loop = new PollingLoop(
      () => this.pass(),
      this.options.pollMs ?? 100,
      (error) => this.options.log?.('event stream pass failed', { error: String(error) }),
    );
    this.loop.start();
    this.heartbeat = setInterval(() => {
      for (const stream of this.streams) stream.comment('keep-alive');
    }, this.options.heartbeatMs ?? 15_000);
    this.heartbeat.unref();
  }

  /** Hands every stream its tenant's newly released events; true when a full page says more wait. */
  private async pass(): Promise<boolean> {
    if (this.streams.size === 0) {
      // Nobody listens: the next stream to open starts from the tail then, not from here.
      this.cursor = undefined;
      return false;
    }
    const cursor = this.cursor;
    if (!cursor) return false;
    // The streams whose keys this read judges: only they may be handed what it reads.
    const judged = new Set(this.streams);
    const keys = [...new Set([...judged].map((stream) => stream.keyId))];
    const { events, liveKeys } = await releasedEvents(this.options.orm.em.fork(), cursor, PAGE, keys);
    for (const stream of [...this.streams]) {
      if (!judged.has(stream)) stream.missed();
      else if (!liveKeys.has(stream.keyId)) stream.close(KEY_GONE);
    }
    // A stream opened meanwhile took the cursor as it was: moved on only by this pass.
    if (this.cursor !== cursor) return false;
    for (const event of events) {
      for (const stream of this.byTenant.get(event.tenant_id) ?? []) if (judged.has(stream)) stream.offer(event);
    }
    if (events.length > 0) this.cursor = events.at(-1)!.position;
    return events.length === PAGE;
  }

  /** Ends every stream (their clients resume elsewhere with Last-Event-ID) and stops reading. */
  async close(): Promise<void> {
    this.closing = true;
    for (const stream of [...this.streams]) stream.close('API closing');
    clearInterval(this.heartbeat);
    clearInterval(this.renewal);
    this.renewal = undefined;
    await this.loop?.stop();
    // Their places given back (a second at most: otherwise they lapse).
    await Promise.race([
      Promise.allSettled([...this.dropping]),
      new Promise((resolve) => setTimeout(resolve, 1_000).unref()),
    ]);
  }
}
