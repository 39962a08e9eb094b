// Card authorization ids are the processor's, per card (decisions §16): the same id on two cards
// is two authorizations, each decided on its own card. Every row is kept: an existing
// authorization keeps its id, now under its card (the key was unique on its own, so it is unique
// with the card too). A void (a reversal that came before its decision) names its card from now
// on; a void recorded before this migration named none, and keeps voiding its id on any card, as
// it did when it was recorded (the processor made it; no tenant can make one).
//
// Journal entries and events keep the keys they were written with (the journal is append-only):
// `card-authorization:<id>:hold|clear|release` and `card-authorization:<id>:decided|cleared|
// reversed`. New ones carry the card: `card:<card_id>:authorization:<id>:…` (src/ledger/movements.ts,
// src/cards/authorizations.ts), a form no old key can take, so the two never meet; `admin ledger
// verify` recognises both (src/ledger/verify.ts, `authorizations_match_journal`).
//
// A refused card load whose money an authorization already spent (activities/cards/cards.ts): the funding
// fails and records what could not go back to the wallet, which operators list (`admin cards
// alerts`) and the card's books count (`cards_match_fundings`).
import { sqlMigration } from './sql-migration.ts';

export const Migration0021CardAuthorizationsPerCard = sqlMigration('0021-card-authorizations-per-card', [
  'alter table card_authorizations drop constraint card_authorizations_pkey',
  'alter table card_authorizations add constraint card_authorizations_pkey primary key (card_id, id)',
  'alter table card_authorization_voids add column card_id uuid references cards (id)',
  'alter table card_authorization_voids drop constraint card_authorization_voids_pkey',
  'create unique index card_authorization_voids_card_key on card_authorization_voids (card_id, id) where card_id is not null',
  'create unique index card_authorization_voids_legacy_key on card_authorization_voids (id) where card_id is null',
  // A void whose authorization was decided on one card belongs to that card.
  `update card_authorization_voids v set card_id = a.card_id
     from card_authorizations a where a.id = v.id and v.card_id is null`,
  `alter table card_fundings add column unrecovered_minor bigint not null default 0
     check (unrecovered_minor >= 0 and unrecovered_minor <= amount_minor)`,
  'create index card_fundings_unrecovered_idx on card_fundings (created_at desc, id desc) where unrecovered_minor > 0',
]);
