// Reconciliation (decisions §13): each connector's settlement record against the books, and its
// operator commands. Its daily run is a workflow the worker schedules.
import type { Feature } from '../feature.ts';
import { RECONCILIATION_EVENT_TYPES } from './event-types.ts';
import { reconciliationCommands } from './admin.ts';
import { reconciliationEntities } from './store.ts';

export const reconciliationFeature: Feature = {
  name: 'reconciliation',
  entities: reconciliationEntities,
  events: RECONCILIATION_EVENT_TYPES,
  commands: reconciliationCommands,
};
