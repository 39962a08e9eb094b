// The sandbox bank's own state, in its own PostgreSQL schema (`sandbox_bank`). It knows nothing
// of the gateway's tables. Callbacks to the gateway go through an outbox table, written in the
// same transaction as the state change they announce, so a restart never loses one.
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import type { z } from 'zod';
import type {
  StatementItem as ContractStatementItem,
  TransferCompletedData,
  TransferRequest,
} from '../connectors/generic/contract.ts';

export const SCHEMA = 'sandbox_bank';

const DDL = `
create schema if not exists ${SCHEMA};
create table if not exists ${SCHEMA}.transfers (
  reference text primary key,
  session_id text not null unique,
  amount_minor bigint not null,
  bank_code text not null,
  account_number text not null,
  account_name text not null,
  narration text not null default '',
  status text not null check (status in ('pending', 'successful', 'failed')),
  response_code text not null,
  planned_outcome text not null check (planned_outcome in ('successful', 'failed', 'held')),
  complete_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
create table if not exists ${SCHEMA}.submission_attempts (
  reference text primary key,
  attempts integer not null
);
create table if not exists ${SCHEMA}.virtual_accounts (
  provider text not null,
  account_number text not null,
  reference text not null,
  account_name text not null,
  customer_id text not null,
  bank_code text not null,
  status text not null check (status in ('active', 'closed')),
  close_reason text,
  created_at timestamptz not null default now(),
  primary key (provider, account_number),
  unique (provider, reference)
);
create table if not exists ${SCHEMA}.account_serials (
  provider text primary key,
  next_serial bigint not null
);
create table if not exists ${SCHEMA}.inbound_credits (
  transaction_reference text primary key,
  session_id text not null,
  provider text not null,
  account_number text not null,
  amount_minor bigint not null,
  sender_name text not null,
  created_at timestamptz not null default now()
);
-- The sender's reference is scoped to the receiving account (so to one tenant): the same
-- reference on two accounts is two credits, and nobody learns of another account's references.
alter table ${SCHEMA}.inbound_credits add column if not exists client_reference text;
-- The BVN an account was opened with, as far as this bank keeps it here: its last four digits (it
-- shares the gateway's PostgreSQL in development and tests, where no BVN is kept in clear).
alter table ${SCHEMA}.virtual_accounts add column if not exists bvn_last4 text;
create table if not exists ${SCHEMA}.callbacks (
  event_id text primary key,
  type text not null,
  payload jsonb not null,
  attempts integer not null default 0,
  next_attempt_at timestamptz not null default now(),
  delivered_at timestamptz,
  last_error text,
  created_at timestamptz not null default now()
);
create index if not exists callbacks_due_idx on ${SCHEMA}.callbacks (next_attempt_at) where delivered_at is null;
create table if not exists ${SCHEMA}.cards (
  card_reference text primary key,
  reference text not null unique,
  customer_id text not null,
  last4 text not null,
  locked boolean not null default false,
  balance_minor bigint not null default 0,
  created_at timestamptz not null default now()
);
create table if not exists ${SCHEMA}.card_fundings (
  reference text primary key,
  card_reference text not null,
  amount_minor bigint not null,
  created_at timestamptz not null default now()
);
create table if not exists ${SCHEMA}.card_authorizations (
  authorization_id text not null,
  card_reference text not null,
  request jsonb not null,
  decision text,
  reason text,
  created_at timestamptz not null default now(),
  primary key (card_reference, authorization_id)
);
-- Authorization ids are the processor's per card: the same id on two cards is two purchases. A
-- schema made when they were one namespace moves to the per-card key, keeping every row.
do $$ begin
  if exists (select 1 from pg_constraint
              where conrelid = '${SCHEMA}.card_authorizations'::regclass and contype = 'p' and cardinality(conkey) = 1) then
    alter table ${SCHEMA}.card_authorizations drop constraint card_authorizations_pkey;
    alter table ${SCHEMA}.card_authorizations add primary key (card_reference, authorization_id);
  end if;
end $$;
-- How the processor answers a card's loads (control route): accept them, answer unavailable (503,
-- retried by the gateway), or refuse them for good.
alter table ${SCHEMA}.cards add column if not exists load_answer text not null default 'accept'
  check (load_answer in ('accept', 'unavailable', 'refuse'));
create table if not exists ${SCHEMA}.provider_state (
  provider text primary key,
  down boolean not null
);
-- What the settlement statement says differently from the bank's own records (control routes):
-- a transaction it forgets, an amount it misstates, or one it invents on a given day.
create table if not exists ${SCHEMA}.statement_adjustments (
  id bigint generated always as identity primary key,
  action text not null check (action in ('forget', 'amend', 'invent')),
  reference text not null,
  kind text check (kind in ('transfer', 'inbound_credit')),
  value_date date,
  session_id text,
  amount_minor bigint,
  status text check (status in ('successful', 'failed')),
  provider text,
  bank_code text,
  account_number text,
  created_at timestamptz not null default now()
);
create index if not exists statement_adjustments_reference_idx on ${SCHEMA}.statement_adjustments (reference);
`;

export type TransferStatus = 'pending' | 'successful' | 'failed';

export interface TransferRow {
  reference: string;
  session_id: string;
  amount_minor: string;
  bank_code: string;
  account_number: string;
  account_name: string;
  narration: string;
  status: TransferStatus;
  response_code: string;
  planned_outcome: 'successful' | 'failed' | 'held';
  created_at: Date;
  updated_at: Date;
}

export interface VirtualAccountRow {
  provider: string;
  account_number: string;
  reference: string;
  account_name: string;
  customer_id: string;
  bank_code: string;
  status: 'active' | 'closed';
  /** The last 4 digits of the BVN the account was opened with, if one was given. */
  bvn_last4: string | null;
  created_at: Date;
}

/** One line of the daily settlement statement: the contract's, and the bank code this bank keeps. */
export type StatementItem = ContractStatementItem & { bank_code: string | null };

export type StatementAdjustment =
  | { action: 'forget'; reference: string }
  | { action: 'amend'; reference: string; amountMinor: number }
  | {
      action: 'invent';
      reference: string;
      kind: 'transfer' | 'inbound_credit';
      valueDate: string;
      sessionId: string;
      amountMinor: number;
      status: 'successful' | 'failed';
      provider: string | null;
      bankCode: string | null;
      accountNumber: string;
    };

export interface CallbackRow {
  event_id: string;
  type: string;
  payload: Record<string, unknown>;
  attempts: number;
}

/** NIP session ids are 30 digits: here a fixed sandbox institution prefix, the time, and randomness. */
export function newSessionId(now = new Date()): string {
  const stamp = now.toISOString().replace(/\D/g, '').slice(2, 14); // yyMMddHHmmss
  const random = BigInt(`0x${randomBytes(8).toString('hex')}`)
    .toString()
    .padStart(20, '0')
    .slice(-12);
  return `999999${stamp}${random}`;
}

export function newEventId(): string {
  return `sbx_evt_${randomUUID().replaceAll('-', '')}`;
}

export class SandboxStore {
  readonly pool: pg.Pool;

  constructor(databaseUrl: string) {
    this.pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
  }

  async migrate(): Promise<void> {
    // Serialise concurrent starts (tests start several banks on one database).
    const client = await this.pool.connect();
    try {
      await client.query('select pg_advisory_lock(hashtext($1))', [SCHEMA]);
      await client.query(DDL);
    } finally {
      await client.query('select pg_advisory_unlock(hashtext($1))', [SCHEMA]);
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  async transaction<T>(work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
    const client = await this.pool.connect();
    try {
      await client.query('begin');
      const result = await work(client);
      await client.query('commit');
      return result;
    } catch (error) {
      await client.query('rollback');
      throw error;
    } finally {
      client.release();
    }
  }

  async isDown(provider: string): Promise<boolean> {
    const { rows } = await this.pool.query<{ down: boolean }>(
      `select down from ${SCHEMA}.provider_state where provider = $1`,
      [provider],
    );
    return rows[0]?.down ?? false;
  }

  async setDown(provider: string, down: boolean): Promise<void> {
    await this.pool.query(
      `insert into ${SCHEMA}.provider_state (provider, down) values ($1, $2)
       on conflict (provider) do update set down = excluded.down`,
      [provider, down],
    );
  }

  /** Counts a submission attempt for a reference; returns the attempt number (1-based). */
  async countAttempt(reference: string): Promise<number> {
    const { rows } = await this.pool.query<{ attempts: number }>(
      `insert into ${SCHEMA}.submission_attempts (reference, attempts) values ($1, 1)
       on conflict (reference) do update set attempts = ${SCHEMA}.submission_attempts.attempts + 1
       returning attempts`,
      [reference],
    );
    return rows[0]!.attempts;
  }

  async findTransfer(reference: string): Promise<TransferRow | undefined> {
    const { rows } = await this.pool.query<TransferRow>(`select * from ${SCHEMA}.transfers where reference = $1`, [
      reference,
    ]);
    return rows[0];
  }

  /** Records an accepted transfer; a repeat of the same reference returns the first one. */
  async acceptTransfer(
    request: z.output<typeof TransferRequest>,
    plan: { outcome: 'successful' | 'failed' | 'held'; completeInMs: number },
  ): Promise<{ transfer: TransferRow; created: boolean }> {
    const { rows } = await this.pool.query<TransferRow>(
      `insert into ${SCHEMA}.transfers
         (reference, session_id, amount_minor, bank_code, account_number, account_name, narration, status,
          response_code, planned_outcome, complete_at)
       values ($1, $2, $3, $4, $5, $6, $7, 'pending', '09', $8,
               case when $8 = 'held' then null else now() + ($9::integer * interval '1 millisecond') end)
       on conflict (reference) do nothing returning *`,
      [
        request.reference,
        newSessionId(),
        request.amount_minor,
        request.bank_code,
        request.account_number,
        request.account_name,
        request.narration,
        plan.outcome,
        plan.completeInMs,
      ],
    );
    if (rows[0]) return { transfer: rows[0], created: true };
    return { transfer: (await this.findTransfer(request.reference))!, created: false };
  }

  /** Settles a pending transfer and queues its callback, in one transaction. */
  async settleTransfer(
    client: pg.PoolClient,
    reference: string,
    outcome: 'successful' | 'failed',
    responseCode: string,
    message: string,
  ): Promise<TransferRow | undefined> {
    const { rows } = await client.query<TransferRow>(
      `update ${SCHEMA}.transfers set status = $2, response_code = $3, updated_at = now()
        where reference = $1 and status = 'pending' returning *`,
      [reference, outcome, responseCode],
    );
    const transfer = rows[0];
    if (!transfer) return undefined;
    await this.queueCallback(client, 'transfer.completed', {
      reference: transfer.reference,
      status: outcome,
      session_id: transfer.session_id,
      code: responseCode,
      message,
    } satisfies z.input<typeof TransferCompletedData>);
    return transfer;
  }

  /** Pending, not held transfers whose time has come. */
  async dueTransfers(limit = 50): Promise<TransferRow[]> {
    const { rows } = await this.pool.query<TransferRow>(
      `select * from ${SCHEMA}.transfers
        where status = 'pending' and planned_outcome <> 'held' and complete_at <= now()
        order by complete_at limit $1`,
      [limit],
    );
    return rows;
  }

  /** Queues a callback, its body as the contract has it: `{id, type, data}`. */
  async queueCallback(client: pg.PoolClient, type: string, data: Record<string, unknown>): Promise<string> {
    const eventId = newEventId();
    const payload = { id: eventId, type, data };
    await client.query(`insert into ${SCHEMA}.callbacks (event_id, type, payload) values ($1, $2, $3)`, [
      eventId,
      type,
      JSON.stringify(payload),
    ]);
    return eventId;
  }

  /** Claims due callbacks (other bank processes skip the locked ones). */
  async claimDueCallbacks(client: pg.PoolClient, limit = 20): Promise<CallbackRow[]> {
    const { rows } = await client.query<CallbackRow>(
      `select event_id, type, payload, attempts from ${SCHEMA}.callbacks
        where delivered_at is null and next_attempt_at <= now()
        order by next_attempt_at limit $1 for update skip locked`,
      [limit],
    );
    return rows;
  }

  /**
   * The settlement statement of one UTC day: every transfer settled or failed that day (by the
   * time it was settled), every inbound credit received that day, then the adjustments: forgotten
   * references left out, amended amounts shown, invented items added. Ordered by time.
   */
  async statement(date: string): Promise<StatementItem[]> {
    const { rows } = await this.pool.query<StatementItem & { amount_minor: string }>(
      `with day as (select $1::date::timestamp at time zone 'UTC' as starts,
                           ($1::date + 1)::timestamp at time zone 'UTC' as ends),
       amended as (select distinct on (reference) reference, amount_minor from ${SCHEMA}.statement_adjustments
                    where action = 'amend' order by reference, id desc),
       forgotten as (select reference from ${SCHEMA}.statement_adjustments where action = 'forget'),
       recorded as (
         select 'transfer' as kind, t.reference, t.session_id, t.amount_minor, t.status, null as provider,
                t.bank_code, t.account_number, t.updated_at as at
           from ${SCHEMA}.transfers t, day
          where t.status in ('successful', 'failed') and t.updated_at >= day.starts and t.updated_at < day.ends
         union all
         select 'inbound_credit', c.transaction_reference, c.session_id, c.amount_minor, 'successful', c.provider,
                v.bank_code, c.account_number, c.created_at
           from ${SCHEMA}.inbound_credits c
           join day on c.created_at >= day.starts and c.created_at < day.ends
           left join ${SCHEMA}.virtual_accounts v on v.provider = c.provider and v.account_number = c.account_number
       )
       select r.kind, r.reference, r.session_id, coalesce(a.amount_minor, r.amount_minor) as amount_minor, r.status,
              r.provider, r.bank_code, r.account_number, to_char(r.at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') as value_time
         from recorded r left join amended a on a.reference = r.reference
        where r.reference not in (select reference from forgotten)
       union all
       select i.kind, i.reference, i.session_id, i.amount_minor, i.status, i.provider, i.bank_code, i.account_number,
              to_char(i.created_at at time zone 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
         from ${SCHEMA}.statement_adjustments i
        where i.action = 'invent' and i.value_date = $1::date
       order by value_time, reference`,
      [date],
    );
    return rows.map((row) => ({ ...row, amount_minor: Number(row.amount_minor) }));
  }

  async adjustStatement(adjustment: StatementAdjustment): Promise<void> {
    if (adjustment.action === 'invent') {
      await this.pool.query(
        `insert into ${SCHEMA}.statement_adjustments
           (action, reference, kind, value_date, session_id, amount_minor, status, provider, bank_code, account_number,
            created_at)
         values ('invent', $1, $2, $3::date, $4, $5, $6, $7, $8, $9,
                 case when $3::date = (now() at time zone 'UTC')::date then now()
                      else $3::date::timestamp at time zone 'UTC' + interval '12 hours' end)`,
        [
          adjustment.reference,
          adjustment.kind,
          adjustment.valueDate,
          adjustment.sessionId,
          adjustment.amountMinor,
          adjustment.status,
          adjustment.provider,
          adjustment.bankCode,
          adjustment.accountNumber,
        ],
      );
      return;
    }
    await this.pool.query(
      `insert into ${SCHEMA}.statement_adjustments (action, reference, amount_minor) values ($1, $2, $3)`,
      [adjustment.action, adjustment.reference, adjustment.action === 'amend' ? adjustment.amountMinor : null],
    );
  }

  /** Whether the bank knows a transaction by this reference (a transfer's or a credit's). */
  async knowsReference(reference: string): Promise<boolean> {
    const { rows } = await this.pool.query(
      `select 1 from ${SCHEMA}.transfers where reference = $1
       union all select 1 from ${SCHEMA}.inbound_credits where transaction_reference = $1`,
      [reference],
    );
    return rows.length > 0;
  }

  async nextSerial(provider: string, base: number): Promise<number> {
    const { rows } = await this.pool.query<{ serial: string }>(
      `insert into ${SCHEMA}.account_serials (provider, next_serial) values ($1, $2 + 1)
       on conflict (provider) do update set next_serial = ${SCHEMA}.account_serials.next_serial + 1
       returning next_serial - 1 as serial`,
      [provider, base],
    );
    return Number(rows[0]!.serial);
  }
}
