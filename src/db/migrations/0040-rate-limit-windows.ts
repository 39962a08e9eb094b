// Rate-limit budgets shared by every API replica (decisions §12, §21): one row per budget and
// fixed window, its count raised by one statement per request (src/http/rate-limit-windows.ts).
// The key leads with the window so that the windows that have ended are one range of the index to
// prune. Unlogged: a count is worth one minute, so no request pays for WAL to keep it; a crash of
// PostgreSQL (or a failover to a standby) empties the table, which gives every budget a fresh window.
import { sqlMigration } from './sql-migration.ts';

export const Migration0040RateLimitWindows = sqlMigration('0040-rate-limit-windows', [
  `
      create unlogged table rate_limit_windows (
        window_start timestamptz not null,
        bucket text not null,
        count integer not null,
        primary key (window_start, bucket)
      )
  `,
]);
