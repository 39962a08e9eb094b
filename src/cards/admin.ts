// Operator commands for cards: holds the processor never cleared nor reversed (found, then released
// as its reversal would), and refused loads whose money purchases had already spent.
import type { OperatorCommand } from '../admin/command.ts';
import { OperatorRefusal, UsageError } from '../admin/errors.ts';
import { NOTE, OPERATOR, atMost, duration, flag, limit, limitFlag, uuid } from '../admin/flags.ts';
import {
  CardAuthorization,
  authorizationView,
  findAuthorizations,
  pendingHolds,
  settleAuthorization,
} from './authorizations.ts';
import { refusedLoadAlerts } from './store.ts';

export const cardCommands: OperatorCommand[] = [
  {
    name: 'cards holds',
    description: 'Card authorizations still holding money after that long, oldest first, across every card',
    flags: { 'older-than': flag.optional('D', 'held at least this long: 90s, 15m, 2h or 1d', '7d') },
    async run(em, flags) {
      const items = await pendingHolds(em, flags.get('older-than', duration));
      return {
        older_than: flags.get('older-than'),
        count: items.length,
        held_minor: items.reduce((sum, item) => sum + item.amount_minor, 0),
        items: items.map((item) => ({ ...authorizationView(item), tenant_id: item.tenant_id })),
      };
    },
  },
  // Authorization ids are per card: an id on several cards needs --card (a usage error lists them).
  {
    name: 'cards release-hold',
    description: "Releases a pending authorization's hold as the processor's reversal would",
    mutates: true,
    flags: {
      authorization: flag.required('ID', "the authorization's id"),
      card: flag.optional('CARD_ID', 'the card, when the id is on several cards'),
      note: NOTE,
      operator: OPERATOR,
    },
    async run(em, flags) {
      const id = flags.get('authorization');
      const cardId = flags.optional('card', uuid('a card id'));
      flags.get('note', atMost(1000));
      const rows = await findAuthorizations(em, cardId !== undefined ? { cardId } : {}, id, 100);
      const row = rows[0];
      if (!row) {
        throw new OperatorRefusal(
          'not_found',
          `no card authorization ${id}${cardId !== undefined ? ` on card ${cardId}` : ''}`,
        );
      }
      if (rows.length > 1) {
        throw new UsageError(
          `card authorization ${id} is on ${rows.length} cards (${rows.map((one) => one.card_id).join(', ')}): name one with --card`,
        );
      }
      if (row.status !== 'pending') {
        throw new OperatorRefusal('wrong_status', `card authorization ${id} is ${row.status}; nothing is held`);
      }
      const result = await settleAuthorization(em.fork(), {
        kind: 'reverse',
        authorizationId: id,
        cardId: row.card_id,
      });
      if (!result.startsWith('reversed')) throw new OperatorRefusal('wrong_status', result);
      const released = await em.fork().findOneOrFail(CardAuthorization, { card_id: row.card_id, id });
      return {
        released_minor: row.amount_minor,
        operator: flags.operator(),
        authorization: authorizationView(released),
      };
    },
  },
  // A card load the processor refused after purchases had spent its money (activities/cards/cards.ts):
  // the funding failed, what the card still held went back to the wallet, the rest is listed here.
  {
    name: 'cards alerts',
    description: 'Refused card loads whose money purchases had already spent, newest first',
    flags: { limit: limitFlag(100) },
    async run(em, flags) {
      const { items, count, unrecoveredMinor } = await refusedLoadAlerts(em, flags.get('limit', limit));
      return { count, unrecovered_minor: unrecoveredMinor, items };
    },
  },
];
