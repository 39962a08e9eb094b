// A connection that LISTENs on the events channel, as the fan-out's listener does: what a test sees
// notified, and a round trip after which every notification of a commit before it has arrived.
import pg from 'pg';
import { EVENTS_CHANNEL } from '../../src/db/migrations/0011-event-notify.ts';

export interface EventNotifications {
  /** One entry per notification received, in order. */
  notified: string[];
  /** Resolves once the notifications of what committed before it have arrived (delivered at commit). */
  caughtUp(): Promise<void>;
  end(): Promise<void>;
}

export async function listenForEvents(connectionString: string): Promise<EventNotifications> {
  const listener = new pg.Client({ connectionString });
  await listener.connect();
  const notified: string[] = [];
  listener.on('notification', (message) => notified.push(message.channel));
  await listener.query(`listen ${EVENTS_CHANNEL}`);
  return {
    notified,
    caughtUp: async () => {
      await listener.query('select 1');
    },
    end: () => listener.end(),
  };
}
