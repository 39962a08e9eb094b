// The gateway's day is Lagos's: both daily limits count from 00:00 Africa/Lagos (decisions §4 for
// transfers, §11 for cards), by the database's clock, so every process and replica agrees on where
// a day starts. One SQL fragment, used by the transfers' daily limit (src/transfers/store.ts) and
// the cards' (src/cards/authorizations.ts).

/** 00:00 today in Africa/Lagos, as a timestamptz to compare `created_at` with. */
export const startOfLagosDay = `(date_trunc('day', now() at time zone 'Africa/Lagos') at time zone 'Africa/Lagos')`;
