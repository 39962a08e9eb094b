// The ledger proves itself: every invariant the books must keep, checked by SQL over all of them.
// Read-only; `admin ledger verify` prints the report and exits 1 on any breach, and the test suite
// and the benchmark run it at their end. Each check names up to 10 breaches, with what was found.
//   entries_balance           every journal entry's postings sum to zero
//   postings_sum_to_zero      all postings, per currency, sum to zero
//   balances_match_postings   every account's balance equals the sum of its postings
//   no_negative_balances      no wallet (no account that may not go negative) is below zero
//   transfers_match_journal   every transfer is reserved once for amount + fee, then settled or
//                             reversed exactly once as its status says (pending/processing: neither);
//                             each discrepancy correction (decisions §12) turns one into the other,
//                             and so does a bank's reversal after success (decisions §21): one
//                             `transfer:<id>:reversal` of amount + fee back to the wallet, on a settled
//                             transfer only, exactly when its row has reversed_at;
//                             a `failed` row with no journal at all is a create that never reserved
//                             (the placeholder of runs recorded before the create path settled its
//                             reservations), and moved no money
//   batches_match_journal     every atomic batch (decisions §14) reserved once, in one entry, for all
//                             its amounts and fees, and each of its refused items released once for
//                             its amount + fee; its accepted items' transfers draw on that entry
//                             (transfers_match_journal counts it as their reservation). An item the
//                             transfer policy refused with the batch (recipient_not_allowed, §20)
//                             was never reserved, nor released; a batch of nothing else reserved nothing
//   cards_match_fundings      every card's balance equals its succeeded fundings, plus those still
//                             pending whose money has moved, plus what refused loads could not take
//                             back (their `unrecovered_minor`: purchases had spent it), less its
//                             pending holds and what its cleared authorizations took
//   holds_match_authorizations every card's hold account equals its pending authorizations' amounts
//   authorizations_match_journal every authorization (a card and the processor's id) has exactly the
//                             entries its decision and status say, on its own card's hold account:
//                             approved → one hold of its amount; cleared → one clearing of it, for
//                             its cleared amount; reversed → one release; declined → none. Entries
//                             are found under either key form: `card:<card>:authorization:<id>:…`,
//                             or `card-authorization:<id>:…` as written before ids were per card
//   credits_match_journal     every inbound credit kept (not refused) is booked once under its key:
//                             applied → what it brought in (amount less fee) in its tenant's wallet;
//                             held → that in its tenant's suspense account, none in the wallet;
//                             released → held, then moved once from suspense to the wallet. Its
//                             returns not failed hold at most what it brought in; a held credit's
//                             are paid from suspense (and, not failed, hold all of it), and only a
//                             held credit's are (decisions §21)
//   suspense_matches_held_credits every tenant mode's suspense account holds what its held credits
//                             brought in, less their returns not failed (paid from suspense)
import type { EntityManager } from '@mikro-orm/postgresql';

/** Runs one read-only statement: the ORM's `execute`, or a plain pg client's query (the benchmark). */
export type ReadSql = (sql: string) => Promise<Record<string, unknown>[]>;

export const readThrough =
  (em: EntityManager): ReadSql =>
  (sql) =>
    em.execute<Record<string, unknown>[]>(sql);

export interface LedgerCheck {
  name: string;
  ok: boolean;
  breaches: number;
  examples: Record<string, unknown>[];
}

export interface LedgerReport {
  ok: boolean;
  checked_at: string;
  counts: { entries: number; postings: number; accounts: number; transfers: number; cards: number };
  checks: LedgerCheck[];
}

const EXAMPLES = 10;

const CHECKS: { name: string; sql: string }[] = [
  {
    name: 'entries_balance',
    sql: `select e.id as entry_id, e.kind, e.idempotency_key, sum(p.amount_minor)::text as sum_minor
            from journal_entries e join postings p on p.entry_id = e.id
           group by e.id having sum(p.amount_minor) <> 0`,
  },
  {
    name: 'postings_sum_to_zero',
    sql: `select a.currency, sum(p.amount_minor)::text as sum_minor
            from postings p join ledger_accounts a on a.id = p.account_id
           group by a.currency having sum(p.amount_minor) <> 0`,
  },
  {
    name: 'balances_match_postings',
    sql: `select a.id as account_id, a.tenant_id, a.code, a.balance_minor::text as balance_minor,
                 coalesce(sum(p.amount_minor), 0)::text as postings_minor
            from ledger_accounts a left join postings p on p.account_id = a.id
           group by a.id having a.balance_minor <> coalesce(sum(p.amount_minor), 0)`,
  },
  {
    name: 'no_negative_balances',
    sql: `select id as account_id, tenant_id, code, balance_minor::text as balance_minor
            from ledger_accounts where balance_minor < 0 and (code = 'wallet' or not allow_negative)`,
  },
  {
    name: 'transfers_match_journal',
    sql: `with journal as (
            select t.id, t.status, t.amount_minor + t.fee_minor as total_minor,
                   (select count(*) from journal_entries e where e.idempotency_key = 'transfer:' || t.id || ':reserve')
                   + (case when b.atomic then 1 else 0 end) as reserves,
                   (select count(*) from journal_entries e where e.idempotency_key = 'transfer:' || t.id || ':settle') as settles,
                   (select count(*) from journal_entries e where e.idempotency_key = 'transfer:' || t.id || ':reverse') as reversals,
                   (select count(*) from journal_entries e where e.idempotency_key like 'transfer:' || t.id || ':discrepancy:%') as corrections,
                   (select count(*) from journal_entries e where e.idempotency_key = 'transfer:' || t.id || ':reversal') as bank_reversals,
                   (select coalesce(sum(p.amount_minor), 0) from journal_entries e join postings p on p.entry_id = e.id
                     join ledger_accounts a on a.id = p.account_id
                     where e.idempotency_key = 'transfer:' || t.id || ':reversal'
                       and a.code = (case when t.funded_from = 'suspense' then 'suspense' else 'wallet' end)) as returned_minor,
                   t.reversed_at is not null as reversed,
                   (select coalesce(sum(p.amount_minor), 0) from journal_entries e join postings p on p.entry_id = e.id
                     where e.idempotency_key = 'transfer:' || t.id || ':reserve' and p.amount_minor > 0)
                   + (case when b.atomic then t.amount_minor + t.fee_minor else 0 end) as reserved_minor
              from transfers t
              left join transfer_batch_items i on i.transfer_id = t.id
              left join transfer_batches b on b.id = i.batch_id and b.atomic)
          select id as transfer_id, status, total_minor::text, reserved_minor::text,
                 reserves::int, settles::int, reversals::int, corrections::int, bank_reversals::int,
                 returned_minor::text, reversed
            from journal
           where (reserves = 0 and not (status = 'failed' and settles + reversals + corrections + bank_reversals = 0
                                        and not reversed))
              or reserves > 1
              or (reserves = 1 and (
                    reserved_minor <> total_minor
                 or (status in ('pending', 'processing') and settles + reversals + corrections + bank_reversals <> 0)
                 or (status in ('completed', 'failed') and settles + reversals <> 1)
                 or bank_reversals > 1
                 or (bank_reversals = 1) <> reversed
                 or (bank_reversals = 1 and (settles <> 1 or status <> 'failed' or returned_minor <> total_minor))
                 or (status = 'completed' and (settles = 1) <> ((corrections + bank_reversals) % 2 = 0))
                 or (status = 'failed' and (reversals = 1) <> ((corrections + bank_reversals) % 2 = 0))))`,
  },
  {
    name: 'batches_match_journal',
    sql: `with batches as (
            select b.id as batch_id, null::int as index, 'batch' as what,
                   b.total_amount_minor + b.total_fee_minor - coalesce(n.minor, 0) as expected_minor,
                   case when n.items = b.total_count then 0 else 1 end as expected_entries,
                   (select count(*) from journal_entries e where e.idempotency_key = 'transfer-batch:' || b.id || ':reserve') as entries,
                   (select coalesce(sum(p.amount_minor), 0) from journal_entries e join postings p on p.entry_id = e.id
                     where e.idempotency_key = 'transfer-batch:' || b.id || ':reserve' and p.amount_minor > 0) as moved_minor
              from transfer_batches b
              left join lateral (select count(*) as items, sum(i.amount_minor + i.fee_minor) as minor
                                   from transfer_batch_items i
                                  where i.batch_id = b.id and i.error_code = 'recipient_not_allowed') n on true
             where b.atomic
            union all
            select i.batch_id, i.index, 'release',
                   case when i.status = 'refused' and i.error_code is distinct from 'recipient_not_allowed'
                        then i.amount_minor + i.fee_minor else 0 end,
                   case when i.status = 'refused' and i.error_code is distinct from 'recipient_not_allowed'
                        then 1 else 0 end,
                   (select count(*) from journal_entries e
                     where e.idempotency_key = 'transfer-batch:' || i.batch_id || ':item:' || i.index || ':release'),
                   (select coalesce(sum(p.amount_minor), 0) from journal_entries e join postings p on p.entry_id = e.id
                     where e.idempotency_key = 'transfer-batch:' || i.batch_id || ':item:' || i.index || ':release'
                       and p.amount_minor > 0)
              from transfer_batch_items i join transfer_batches b on b.id = i.batch_id and b.atomic)
          select batch_id, index, what, expected_minor::text, moved_minor::text, expected_entries, entries::int
            from batches where entries <> expected_entries or moved_minor <> expected_minor`,
  },
  {
    name: 'cards_match_fundings',
    sql: `with expected as (
            select c.id as card_id, c.tenant_id,
                   coalesce(sum(f.amount_minor) filter (
                     where f.status = 'succeeded'
                        or (f.status = 'pending' and exists (
                              select 1 from journal_entries e where e.idempotency_key = 'card-funding:' || f.id))), 0)
                   + coalesce(sum(f.unrecovered_minor) filter (where f.status = 'failed'), 0) as expected_minor
              from cards c left join card_fundings f on f.card_id = c.id
             group by c.id, c.tenant_id),
          spent as (
            select card_id, sum(case when status = 'pending' then amount_minor else cleared_minor end) as spent_minor
              from card_authorizations where status in ('pending', 'cleared') group by card_id)
          select x.card_id, (x.expected_minor - coalesce(s.spent_minor, 0))::text as expected_minor,
                 coalesce(a.balance_minor, 0)::text as balance_minor
            from expected x
            left join spent s on s.card_id = x.card_id
            left join ledger_accounts a on a.tenant_id = x.tenant_id and a.code = 'card:' || x.card_id
           where coalesce(a.balance_minor, 0) <> x.expected_minor - coalesce(s.spent_minor, 0)`,
  },
  {
    name: 'holds_match_authorizations',
    sql: `with expected as (
            select c.id as card_id, c.tenant_id,
                   coalesce(sum(h.amount_minor) filter (where h.status = 'pending'), 0) as held_minor
              from cards c left join card_authorizations h on h.card_id = c.id
             group by c.id, c.tenant_id)
          select x.card_id, x.held_minor::text as expected_minor, coalesce(a.balance_minor, 0)::text as balance_minor
            from expected x
            left join ledger_accounts a on a.tenant_id = x.tenant_id and a.code = 'card-hold:' || x.card_id
           where coalesce(a.balance_minor, 0) <> x.held_minor`,
  },
  {
    name: 'authorizations_match_journal',
    sql: `with journal as (
            select a.card_id, a.id, a.decision, a.status, a.amount_minor, a.cleared_minor,
                   count(*) filter (where j.step = 'hold' and p.amount_minor = a.amount_minor) as holds,
                   count(*) filter (where j.step = 'clear' and p.amount_minor = -a.amount_minor) as clears,
                   count(*) filter (where j.step = 'release' and p.amount_minor = -a.amount_minor) as releases,
                   coalesce(sum(j.settled_minor) filter (where j.step = 'clear' and p.amount_minor = -a.amount_minor), 0)
                     as settled_minor
              from card_authorizations a
              left join ledger_accounts h on h.tenant_id = a.tenant_id and h.code = 'card-hold:' || a.card_id
              left join lateral (
                select steps.step, e.id,
                       (select coalesce(sum(q.amount_minor), 0) from postings q join ledger_accounts t on t.id = q.account_id
                         where q.entry_id = e.id and t.tenant_id is null and t.code = 'card_settlement') as settled_minor
                  from (values ('hold'), ('clear'), ('release')) as steps (step)
                  join journal_entries e on e.idempotency_key in (
                         'card:' || a.card_id || ':authorization:' || a.id || ':' || steps.step,
                         'card-authorization:' || a.id || ':' || steps.step)) j on true
              -- An entry counts for the authorization whose card's hold account it posts to: an
              -- old-form key names no card, and the same id may since be on another card.
              left join postings p on p.entry_id = j.id and p.account_id = h.id
             group by a.card_id, a.id, a.decision, a.status, a.amount_minor, a.cleared_minor)
          select card_id, id as authorization_id, decision, status, amount_minor::text, cleared_minor::text,
                 holds::int, clears::int, releases::int, settled_minor::text
            from journal
           where holds <> (case when decision = 'approved' then 1 else 0 end)
              or clears <> (case when status = 'cleared' then 1 else 0 end)
              or releases <> (case when status = 'reversed' then 1 else 0 end)
              or settled_minor <> (case when status = 'cleared' then cleared_minor else 0 end)`,
  },
  {
    name: 'credits_match_journal',
    sql: `with credits as (
            select c.id as credit_id, c.status, c.amount_minor - c.fee_minor as net_minor, v.tenant_id,
                   (select count(*) from journal_entries e
                     where e.idempotency_key = 'inbound-credit:' || c.provider || ':' || c.transaction_reference) as entries,
                   (select coalesce(sum(p.amount_minor), 0) from journal_entries e join postings p on p.entry_id = e.id
                      join ledger_accounts a on a.id = p.account_id
                     where e.idempotency_key = 'inbound-credit:' || c.provider || ':' || c.transaction_reference
                       and a.tenant_id = v.tenant_id and a.code = 'wallet') as to_wallet,
                   (select coalesce(sum(p.amount_minor), 0) from journal_entries e join postings p on p.entry_id = e.id
                      join ledger_accounts a on a.id = p.account_id
                     where e.idempotency_key = 'inbound-credit:' || c.provider || ':' || c.transaction_reference
                       and a.tenant_id = v.tenant_id and a.code = 'suspense') as to_suspense,
                   (select count(*) from journal_entries e
                     where e.idempotency_key = 'inbound-credit-release:' || c.provider || ':' || c.transaction_reference) as releases,
                   (select coalesce(sum(p.amount_minor), 0) from journal_entries e join postings p on p.entry_id = e.id
                      join ledger_accounts a on a.id = p.account_id
                     where e.idempotency_key = 'inbound-credit-release:' || c.provider || ':' || c.transaction_reference
                       and a.tenant_id = v.tenant_id and a.code = 'wallet') as released_minor,
                   (select coalesce(sum(t.amount_minor), 0) from transfers t
                     where t.return_of = c.id and t.status <> 'failed') as returned_minor,
                   (select coalesce(sum(t.amount_minor), 0) from transfers t
                     where t.return_of = c.id and t.status <> 'failed' and t.funded_from = 'suspense') as from_suspense_minor
              from inbound_credits c left join virtual_accounts v on v.id = c.virtual_account_id
             where c.status <> 'refused')
          select credit_id, status, tenant_id, net_minor::text, entries::int, to_wallet::text, to_suspense::text,
                 releases::int, released_minor::text, returned_minor::text, from_suspense_minor::text
            from credits
           where entries <> 1
              or returned_minor > net_minor
              or (status = 'applied' and (to_wallet <> net_minor or to_suspense <> 0 or releases <> 0 or from_suspense_minor <> 0))
              or (status = 'held' and (to_suspense <> net_minor or to_wallet <> 0 or releases <> 0
                                      or returned_minor <> from_suspense_minor or returned_minor not in (0, net_minor)))
              or (status = 'released' and (to_suspense <> net_minor or to_wallet <> 0 or releases <> 1
                                          or released_minor <> net_minor or from_suspense_minor <> 0))`,
  },
  {
    name: 'suspense_matches_held_credits',
    sql: `with held as (
            select v.tenant_id, sum(c.amount_minor - c.fee_minor) as held_minor
              from inbound_credits c join virtual_accounts v on v.id = c.virtual_account_id
             where c.status = 'held' group by v.tenant_id),
          sent_back as (
            select tenant_id, sum(amount_minor + fee_minor) as out_minor from transfers
             where funded_from = 'suspense' and status <> 'failed' group by tenant_id),
          tenants as (
            select tenant_id from held union select tenant_id from sent_back
            union select tenant_id from ledger_accounts where code = 'suspense')
          select t.tenant_id, (coalesce(h.held_minor, 0) - coalesce(r.out_minor, 0))::text as expected_minor,
                 coalesce(a.balance_minor, 0)::text as balance_minor
            from tenants t
            left join held h on h.tenant_id = t.tenant_id
            left join sent_back r on r.tenant_id = t.tenant_id
            left join ledger_accounts a on a.tenant_id = t.tenant_id and a.code = 'suspense'
           where coalesce(a.balance_minor, 0) <> coalesce(h.held_minor, 0) - coalesce(r.out_minor, 0)`,
  },
];

export async function verifyLedger(read: ReadSql): Promise<LedgerReport> {
  const checks: LedgerCheck[] = [];
  for (const check of CHECKS) {
    const rows = await read(check.sql);
    checks.push({ name: check.name, ok: rows.length === 0, breaches: rows.length, examples: rows.slice(0, EXAMPLES) });
  }
  const [counts] = await read(
    `select (select count(*) from journal_entries)::text as entries, (select count(*) from postings)::text as postings,
            (select count(*) from ledger_accounts)::text as accounts, (select count(*) from transfers)::text as transfers,
            (select count(*) from cards)::text as cards`,
  );
  return {
    ok: checks.every((check) => check.ok),
    checked_at: new Date().toISOString(),
    counts: {
      entries: Number(counts?.entries),
      postings: Number(counts?.postings),
      accounts: Number(counts?.accounts),
      transfers: Number(counts?.transfers),
      cards: Number(counts?.cards),
    },
    checks,
  };
}
