// Wakes a process when events are recorded: one PostgreSQL connection of its own LISTENs on the
// channel that the events table's trigger notifies (migration 0011). It is a hint, not a queue:
// callers still poll, so a notification missed while the connection was down costs one poll
// interval, never an event. The connection is remade after a failure, a second later.
import pg from 'pg';
import { EVENTS_CHANNEL } from '../db/migrations/0011-event-notify.ts';

/** How the listening connection names itself in pg_stat_activity. */
export const LISTENER_APPLICATION_NAME = 'gateway-event-listener';

export interface EventNotificationOptions {
  connectionString: string;
  onEvent: () => void;
  log?: (message: string, fields?: Record<string, unknown>) => void;
  reconnectMs?: number;
}

export class EventNotifications {
  private readonly options: EventNotificationOptions;
  private client: pg.Client | undefined;
  private retry: NodeJS.Timeout | undefined;
  private stopped = false;

  constructor(options: EventNotificationOptions) {
    this.options = options;
  }

  async start(): Promise<void> {
    if (this.stopped || this.client) return;
    const client = new pg.Client({
      connectionString: this.options.connectionString,
      application_name: LISTENER_APPLICATION_NAME,
    });
    this.client = client;
    const lost = (error?: Error) => {
      if (this.client !== client) return;
      this.client = undefined;
      client.removeAllListeners('notification');
      void client.end().catch(() => {});
      if (this.stopped) return;
      this.options.log?.('event notifications lost; polling until they are back', { error: String(error) });
      this.retry = setTimeout(() => void this.start(), this.options.reconnectMs ?? 1_000);
    };
    client.on('error', lost);
    client.on('end', () => lost(new Error('connection ended')));
    client.on('notification', () => this.options.onEvent());
    try {
      await client.connect();
      await client.query(`listen ${EVENTS_CHANNEL}`);
      // Events recorded while nobody listened: one pass picks them up.
      this.options.onEvent();
    } catch (error) {
      lost(error instanceof Error ? error : new Error(String(error)));
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => {});
  }
}
