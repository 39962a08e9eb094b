// New events wake the fan-out at once: a statement that inserts into events notifies the channel
// `gateway_events` (delivered at commit, once per transaction). Listeners still poll, so a
// notification lost while no replica listened delays an event by one poll, never loses it.
import { sqlMigration } from './sql-migration.ts';

export const EVENTS_CHANNEL = 'gateway_events';

export const Migration0011EventNotify = sqlMigration('0011-event-notify', [
  `
      create function notify_gateway_events() returns trigger language plpgsql as $$
      begin
        perform pg_notify('${EVENTS_CHANNEL}', '');
        return null;
      end $$`,
  `
      create trigger events_notify after insert on events
        for each statement execute function notify_gateway_events()`,
]);
