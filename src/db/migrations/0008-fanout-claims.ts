// Claims held as leases, not as open transactions: a worker replica claims a batch of events for
// fan-out until `fanout_claimed_until` (so two replicas never do the same event at once, and a
// dead one's claim runs out), and a failed event waits for `next_fanout_at` without holding up
// the events after it. The callback route claims a provider callback's dispatch the same way.
import { sqlMigration } from './sql-migration.ts';

export const Migration0008FanoutClaims = sqlMigration('0008-fanout-claims', [
  `
      alter table events
        add column fanout_claimed_by text,
        add column fanout_claimed_until timestamptz,
        add column fanout_attempts integer not null default 0,
        add column next_fanout_at timestamptz,
        add column last_fanout_error text`,
  'alter table provider_callbacks add column dispatch_claimed_until timestamptz',
]);
