// The cards feature (decisions §9–§11): cards and their controls and funding, the processor's
// authorization requests (answered while it waits) and clearings, and their operator commands.
import type { Feature } from '../feature.ts';
import { CARD_EVENT_TYPES } from './event-types.ts';
import { cardCommands } from './admin.ts';
import { CardAuthorization } from './authorizations.ts';
import { registerCardCallbacks } from './callbacks.ts';
import { cardRoutes } from './routes.ts';
import { CardOperationSweep } from './sweep.ts';
import { CardService } from './service.ts';
import { cardEntities } from './store.ts';

export const cardsFeature: Feature = {
  name: 'cards',
  entities: [...cardEntities, CardAuthorization],
  events: CARD_EVENT_TYPES,
  commands: cardCommands,
  sweeps: (context) => [new CardOperationSweep(context)],
  api(app, { config, orm, client, providers, dispatcher, metrics, cardContinueAsNewAfter }) {
    const cards = new CardService({
      orm,
      client,
      taskQueue: config.TEMPORAL_TASK_QUEUE,
      providers,
      observeDecision: (timing) => metrics.observeCardDecision(timing),
      ...(cardContinueAsNewAfter ? { continueAsNewAfter: cardContinueAsNewAfter } : {}),
    });
    cardRoutes(app, { orm, cards });
    registerCardCallbacks(dispatcher, { orm, providers, cards });
  },
};
