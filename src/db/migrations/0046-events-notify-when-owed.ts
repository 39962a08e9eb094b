// An event no listening endpoint subscribes to is written fanned out already (src/events/events.ts),
// decided as it is inserted by `webhook_endpoint_listens`: the rule of `subscribes`
// (src/events/event-types.ts) over the tenant's listening endpoints, as SQL, where the event insert
// can ask it without the events module importing the webhooks feature (test/integration/fanout.test.ts
// holds the two to each other). A plain SQL function, so the planner inlines it into the insert.
//
// The statement that records events wakes the fan-out only when one of its rows is still owed a
// fan-out, so a burst of events owed to nobody (a tenant with no endpoint) costs no pass. The
// trigger reads the statement's own rows (its transition table), never the table.
import { EVENTS_CHANNEL } from './0011-event-notify.ts';
import { sqlMigration } from './sql-migration.ts';

export const Migration0046EventsNotifyWhenOwed = sqlMigration('0046-events-notify-when-owed', [
  `
      create function webhook_endpoint_listens(tenant uuid, event_type text) returns boolean
        language sql stable as $$
          select exists (
            select 1 from webhook_endpoints e
             where e.tenant_id = tenant and e.status = 'listening'
               and (event_type = any (e.events)
                    or ('*' = any (e.events) and not starts_with(event_type, 'event.delivery.'))))
        $$`,
  `
      create or replace function notify_gateway_events() returns trigger language plpgsql as $$
      begin
        if coalesce(current_setting('gateway.quiet_events', true), '') <> 'on'
           and exists (select 1 from inserted where fanned_out_at is null) then
          perform pg_notify('${EVENTS_CHANNEL}', '');
        end if;
        return null;
      end $$`,
  'drop trigger events_notify on events',
  `
      create trigger events_notify after insert on events referencing new table as inserted
        for each statement execute function notify_gateway_events()`,
]);
