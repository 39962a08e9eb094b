// The sandbox bank's own state, in its own PostgreSQL schema (`sandbox_bank`), and the only code
// that writes it. It knows nothing of the gateway's tables. Callbacks to the gateway go through an
// outbox table, written in the same transaction as the state change they announce, so a restart
// never loses one.
import { randomBytes, randomUUID } from 'node:crypto';
import pg from 'pg';
import type { z } from 'zod';
import type {
  StatementItem as ContractStatementItem,
  TransferCompletedData,
  TransferRequest,
  TransferReversedData,
  VirtualAccountCreditedData,
  VirtualAccountRequest,
} from '../connectors/generic/contract.ts';
import { nuban } from './banks.ts';

const SCHEMA = 'sandbox_bank';

/**
 * A virtual account's key at this bank, and how a credit names the account it lands in: the
 * provider this bank plays for it, and its number there.
 */
const ACCOUNT_KEY = 'provider text not null,\n  account_number text not null';

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
  status text not null check (status in ('pending', 'successful', 'failed', 'reversed')),
  response_code text not null,
  planned_outcome text not null check (planned_outcome in ('successful', 'failed', 'held', 'reversed')),
  complete_at timestamptz,
  created_at timestamptz not null default now(),
  updated_at timestamptz not null default now()
);
-- Reversals after success (contract v1.1, decisions §21): a transfer planned to be reversed is
-- reversed when reverse_at comes, after it succeeded. A schema made before keeps its rows and gains
-- the status and the plan.
alter table ${SCHEMA}.transfers add column if not exists reverse_at timestamptz;
do $$ begin
  if exists (select 1 from pg_constraint where conrelid = '${SCHEMA}.transfers'::regclass
                and conname = 'transfers_status_check' and pg_get_constraintdef(oid) not like '%reversed%') then
    alter table ${SCHEMA}.transfers drop constraint transfers_status_check,
      add constraint transfers_status_check check (status in ('pending', 'successful', 'failed', 'reversed'));
    alter table ${SCHEMA}.transfers drop constraint transfers_planned_outcome_check,
      add constraint transfers_planned_outcome_check
        check (planned_outcome in ('successful', 'failed', 'held', 'reversed'));
  end if;
end $$;
create table if not exists ${SCHEMA}.submission_attempts (
  reference text primary key,
  attempts integer not null
);
create table if not exists ${SCHEMA}.virtual_accounts (
  ${ACCOUNT_KEY},
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
  ${ACCOUNT_KEY},
  amount_minor bigint not null,
  sender_name text not null,
  created_at timestamptz not null default now()
);
-- The sender's reference is scoped to the receiving account (so to one tenant): the same
-- reference on two accounts is two credits, and nobody learns of another account's references.
alter table ${SCHEMA}.inbound_credits add column if not exists client_reference text;
-- The sender's account and bank, when the sender named them (decisions §21): sent with the credit.
alter table ${SCHEMA}.inbound_credits add column if not exists sender_account_number text;
alter table ${SCHEMA}.inbound_credits add column if not exists sender_bank_code text;
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

/** `reversed`: it succeeded, then the bank reversed it (contract v1.1). */
export type TransferStatus = 'pending' | 'successful' | 'failed' | 'reversed';

/** How long after its success a transfer planned to be reversed is reversed (decisions §21: about 2 s). */
export const REVERSAL_DELAY_MS = 2_000;

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
  planned_outcome: 'successful' | 'failed' | 'held' | 'reversed';
  /** When a transfer planned to be reversed is reversed, once it has succeeded. */
  reverse_at: Date | null;
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

/** How the processor answers a card's new loads (steered by a control route). */
export type LoadAnswer = 'accept' | 'unavailable' | 'refuse';

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

  /** `onIdleError`: an idle connection ended (the database stopping or restarting). */
  constructor(databaseUrl: string, onIdleError: (error: Error) => void = () => {}) {
    this.pool = new pg.Pool({ connectionString: databaseUrl, max: 10 });
    // Without a listener, pg's pool turns that into an uncaught error that ends the process; the
    // next query reconnects, or fails and is answered as any failed query is.
    this.pool.on('error', onIdleError);
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
    plan: { outcome: 'successful' | 'failed' | 'held' | 'reversed'; completeInMs: number },
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

  /**
   * Settles a pending transfer and queues its callback, in one transaction. One planned to be
   * reversed that succeeds is due to be reversed REVERSAL_DELAY_MS later.
   */
  async settleTransfer(
    client: pg.PoolClient,
    reference: string,
    outcome: 'successful' | 'failed',
    responseCode: string,
    message: string,
  ): Promise<TransferRow | undefined> {
    const { rows } = await client.query<TransferRow>(
      `update ${SCHEMA}.transfers set status = $2, response_code = $3, updated_at = now(),
              reverse_at = case when planned_outcome = 'reversed' and $2 = 'successful'
                                then now() + ($4::integer * interval '1 millisecond') end
        where reference = $1 and status = 'pending' returning *`,
      [reference, outcome, responseCode, REVERSAL_DELAY_MS],
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

  /**
   * Reverses a transfer that succeeded (contract v1.1) and queues its `transfer.reversed`, in one
   * transaction: the status query says `reversed` from then on. Undefined when it is not successful.
   */
  async reverseTransfer(client: pg.PoolClient, reference: string, message: string): Promise<TransferRow | undefined> {
    const { rows } = await client.query<TransferRow>(
      `update ${SCHEMA}.transfers set status = 'reversed', reverse_at = null, updated_at = now()
        where reference = $1 and status = 'successful' returning *`,
      [reference],
    );
    const transfer = rows[0];
    if (!transfer) return undefined;
    await this.queueCallback(client, 'transfer.reversed', {
      reference: transfer.reference,
      session_id: transfer.session_id,
      code: transfer.response_code,
      message,
    } satisfies z.input<typeof TransferReversedData>);
    return transfer;
  }

  /** Successful transfers planned to be reversed whose time has come. */
  async dueReversals(limit = 50): Promise<TransferRow[]> {
    const { rows } = await this.pool.query<TransferRow>(
      `select * from ${SCHEMA}.transfers where status = 'successful' and reverse_at <= now()
        order by reverse_at limit $1`,
      [limit],
    );
    return rows;
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

  /**
   * Claims the oldest due callback in the caller's transaction (other bank processes skip it): one
   * at a time, so that the transaction delivering it stays open for that one HTTP call only (an open
   * writing transaction holds back every reader of the shared database that waits for older
   * transactions to end, the gateway's event stream among them); a process that dies meanwhile
   * rolls it back, and the callback is due again at once.
   */
  async claimDueCallback(client: pg.PoolClient): Promise<CallbackRow | undefined> {
    const { rows } = await client.query<CallbackRow>(
      `select event_id, type, payload, attempts from ${SCHEMA}.callbacks
        where delivered_at is null and next_attempt_at <= now()
        order by next_attempt_at limit 1 for update skip locked`,
    );
    return rows[0];
  }

  async markCallbackDelivered(client: pg.PoolClient, eventId: string): Promise<void> {
    await client.query(
      `update ${SCHEMA}.callbacks set delivered_at = now(), attempts = attempts + 1 where event_id = $1`,
      [eventId],
    );
  }

  /** A failed delivery: counted, its error kept, and the callback due again after `retryInMs`. */
  async postponeCallback(
    client: pg.PoolClient,
    eventId: string,
    failure: { attempts: number; error: string; retryInMs: number },
  ): Promise<void> {
    await client.query(
      `update ${SCHEMA}.callbacks set attempts = $2, last_error = $3,
              next_attempt_at = now() + ($4::integer * interval '1 millisecond') where event_id = $1`,
      [eventId, failure.attempts, failure.error, failure.retryInMs],
    );
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
         -- A transfer reversed after its success is listed failed, on the day it was reversed.
         select 'transfer' as kind, t.reference, t.session_id, t.amount_minor,
                case when t.status = 'reversed' then 'failed' else t.status end as status, null as provider,
                t.bank_code, t.account_number, t.updated_at as at
           from ${SCHEMA}.transfers t, day
          where t.status in ('successful', 'failed', 'reversed') and t.updated_at >= day.starts and t.updated_at < day.ends
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

  // ---- virtual accounts ----

  async findVirtualAccount(provider: string, accountNumber: string): Promise<VirtualAccountRow | undefined> {
    const { rows } = await this.pool.query<VirtualAccountRow>(
      `select * from ${SCHEMA}.virtual_accounts where provider = $1 and account_number = $2`,
      [provider, accountNumber],
    );
    return rows[0];
  }

  /** Opens an account in the provider's NUBAN range; a repeat of the reference returns the first one. */
  async openVirtualAccount(
    provider: string,
    range: { bankCode: string; serialBase: number },
    request: z.output<typeof VirtualAccountRequest>,
  ): Promise<VirtualAccountRow> {
    const found = await this.pool.query<VirtualAccountRow>(
      `select * from ${SCHEMA}.virtual_accounts where provider = $1 and reference = $2`,
      [provider, request.reference],
    );
    if (found.rows[0]) return found.rows[0];
    const serial = await this.nextSerial(provider, range.serialBase);
    const { rows } = await this.pool.query<VirtualAccountRow>(
      `insert into ${SCHEMA}.virtual_accounts
         (provider, account_number, reference, account_name, customer_id, bank_code, status, bvn_last4)
       values ($1, $2, $3, $4, $5, $6, 'active', $7)
       on conflict (provider, reference) do update set reference = excluded.reference returning *`,
      [
        provider,
        nuban(range.bankCode, serial),
        request.reference,
        request.account_name,
        request.customer_id,
        range.bankCode,
        request.bvn?.slice(-4) ?? null,
      ],
    );
    return rows[0]!;
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
  /** Closes an account (a closed one stays closed, with its first reason). */
  async closeVirtualAccount(
    provider: string,
    accountNumber: string,
    reason: string | null,
  ): Promise<VirtualAccountRow | undefined> {
    const { rows } = await this.pool.query<VirtualAccountRow>(
      `update ${SCHEMA}.virtual_accounts set status = 'closed', close_reason = coalesce(close_reason, $3)
        where provider = $1 and account_number = $2 returning *`,
      [provider, accountNumber, reason],
    );
    return rows[0];
  }

  /**
   * Money arriving in an account, and its `virtual_account.credited` callback queued in the same
   * transaction. A repeat of the transaction reference is the same credit (notified again); one for
   * another amount is refused (undefined).
   */
  async receiveCredit(credit: {
    transactionReference: string;
    provider: string;
    accountNumber: string;
    amountMinor: number;
    senderName: string;
    clientReference: string | null;
    senderAccountNumber: string | null;
    senderBankCode: string | null;
  }): Promise<{ sessionId: string; eventId: string } | undefined> {
    return this.transaction(async (client) => {
      await client.query(
        `insert into ${SCHEMA}.inbound_credits
           (transaction_reference, session_id, provider, account_number, amount_minor, sender_name, client_reference,
            sender_account_number, sender_bank_code)
         values ($1, $2, $3, $4, $5, $6, $7, $8, $9) on conflict (transaction_reference) do nothing`,
        [
          credit.transactionReference,
          newSessionId(),
          credit.provider,
          credit.accountNumber,
          credit.amountMinor,
          credit.senderName,
          credit.clientReference,
          credit.senderAccountNumber,
          credit.senderBankCode,
        ],
      );
      const {
        rows: [received],
      } = await client.query<{
        session_id: string;
        amount_minor: string;
        sender_name: string;
        sender_account_number: string | null;
        sender_bank_code: string | null;
      }>(
        `select session_id, amount_minor, sender_name, sender_account_number, sender_bank_code
           from ${SCHEMA}.inbound_credits where transaction_reference = $1 for update`,
        [credit.transactionReference],
      );
      // The same reference for another amount is another credit under a used reference.
      if (!received || Number(received.amount_minor) !== credit.amountMinor) return undefined;
      const eventId = await this.queueCallback(client, 'virtual_account.credited', {
        account_number: credit.accountNumber,
        amount_minor: credit.amountMinor,
        transaction_reference: credit.transactionReference,
        sender_name: received.sender_name,
        session_id: received.session_id,
        // A repeat sends the sender as the first credit named it.
        ...(received.sender_account_number ? { sender_account_number: received.sender_account_number } : {}),
        ...(received.sender_bank_code ? { sender_bank_code: received.sender_bank_code } : {}),
        // Which of this bank's account ranges received it.
        provider: credit.provider,
      } satisfies z.input<typeof VirtualAccountCreditedData>);
      return { sessionId: received.session_id, eventId };
    });
  }

  // ---- cards ----

  /** Issues a card; a repeat of the reference returns the first card. */
  async issueCard(card: {
    cardReference: string;
    reference: string;
    customerId: string;
    last4: string;
  }): Promise<{ card_reference: string; last4: string }> {
    await this.pool.query(
      `insert into ${SCHEMA}.cards (card_reference, reference, customer_id, last4) values ($1, $2, $3, $4)
       on conflict (reference) do nothing`,
      [card.cardReference, card.reference, card.customerId, card.last4],
    );
    const { rows } = await this.pool.query<{ card_reference: string; last4: string }>(
      `select card_reference, last4 from ${SCHEMA}.cards where reference = $1`,
      [card.reference],
    );
    return rows[0]!;
  }

  async setCardLocked(
    cardReference: string,
    locked: boolean,
  ): Promise<{ card_reference: string; locked: boolean } | undefined> {
    const { rows } = await this.pool.query<{ card_reference: string; locked: boolean }>(
      `update ${SCHEMA}.cards set locked = $2 where card_reference = $1 returning card_reference, locked`,
      [cardReference, locked],
    );
    return rows[0];
  }

  /** How the processor answers the card's loads, and whether this funding reference was loaded already. */
  async loadSteering(
    cardReference: string,
    fundingReference: string,
  ): Promise<{ load_answer: LoadAnswer; loaded: boolean } | undefined> {
    const { rows } = await this.pool.query<{ load_answer: LoadAnswer; loaded: boolean }>(
      `select c.load_answer, exists (select 1 from ${SCHEMA}.card_fundings f where f.reference = $2) as loaded
         from ${SCHEMA}.cards c where c.card_reference = $1`,
      [cardReference, fundingReference],
    );
    return rows[0];
  }

  async setLoadAnswer(cardReference: string, answer: LoadAnswer): Promise<LoadAnswer | undefined> {
    const { rows } = await this.pool.query<{ load_answer: LoadAnswer }>(
      `update ${SCHEMA}.cards set load_answer = $2 where card_reference = $1 returning load_answer`,
      [cardReference, answer],
    );
    return rows[0]?.load_answer;
  }

  /** Loads a card; a repeat of the funding reference loads nothing more. False when there is no such card. */
  async fundCard(cardReference: string, reference: string, amountMinor: number): Promise<boolean> {
    const noCard = new Error('no such card');
    try {
      await this.transaction(async (client) => {
        const inserted = await client.query(
          `insert into ${SCHEMA}.card_fundings (reference, card_reference, amount_minor) values ($1, $2, $3)
           on conflict (reference) do nothing`,
          [reference, cardReference, amountMinor],
        );
        const { rows } = await client.query(
          `update ${SCHEMA}.cards set balance_minor = balance_minor + $2 where card_reference = $1 returning balance_minor`,
          [cardReference, inserted.rowCount ? amountMinor : 0],
        );
        // Nothing kept of a funding for a card this processor never issued.
        if (!rows[0]) throw noCard;
      });
      return true;
    } catch (error) {
      if (error === noCard) return false;
      throw error;
    }
  }

  /**
   * Records a purchase's authorization request (ids are per card: the same id on another card is
   * another purchase) and returns what is known of it: the first request sent under this id, and
   * its decline reason once decided.
   */
  async recordAuthorization<T extends object>(
    cardReference: string,
    authorizationId: string,
    request: T,
  ): Promise<{ request: T; reason: string | null } | undefined> {
    await this.pool.query(
      `insert into ${SCHEMA}.card_authorizations (authorization_id, card_reference, request) values ($1, $2, $3)
       on conflict (card_reference, authorization_id) do nothing`,
      [authorizationId, cardReference, JSON.stringify(request)],
    );
    const { rows } = await this.pool.query<{ request: T; reason: string | null }>(
      `select request, reason from ${SCHEMA}.card_authorizations
        where card_reference = $1 and authorization_id = $2`,
      [cardReference, authorizationId],
    );
    return rows[0];
  }

  /** The decision on an authorization, and with `reverse` its reversal advice queued in the same transaction. */
  async decideAuthorization(
    cardReference: string,
    authorizationId: string,
    decision: { decision: 'approved' | 'declined'; reason: string | null },
    options: { reverse: boolean },
  ): Promise<void> {
    await this.transaction(async (client) => {
      await client.query(
        `update ${SCHEMA}.card_authorizations set decision = $3, reason = $4
          where card_reference = $1 and authorization_id = $2`,
        [cardReference, authorizationId, decision.decision, decision.reason],
      );
      if (options.reverse) {
        await this.queueCallback(client, 'card.authorization.reversed', {
          authorization_id: authorizationId,
          card_reference: cardReference,
          reason: decision.reason,
        });
      }
    });
  }

  /** The cards an authorization id is on (at most two: enough to know it is ambiguous). */
  async authorizationCards(authorizationId: string): Promise<string[]> {
    const { rows } = await this.pool.query<{ card_reference: string }>(
      `select card_reference from ${SCHEMA}.card_authorizations where authorization_id = $1 limit 2`,
      [authorizationId],
    );
    return rows.map((row) => row.card_reference);
  }
}
