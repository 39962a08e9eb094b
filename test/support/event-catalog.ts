// Recorded events against the event catalog (src/events/catalog.ts): each payload checked with Ajv
// against the JSON Schema that GET /api/v1/event-types serves for its type, for the files that
// make real events of every type on the stack.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import { describeEventTypes } from '../../src/events/catalog.ts';
import { EVENT_TYPES } from '../../src/features.ts';

/** The card events, made by their own file; every other type is made by the other. */
export const CARD_EVENT_TYPES = EVENT_TYPES.filter((type) => type.startsWith('card.'));
export const OTHER_EVENT_TYPES = EVENT_TYPES.filter((type) => !type.startsWith('card.'));

const ajv = new Ajv2020({ strict: true, allErrors: true });
const validators = new Map<string, ValidateFunction>(
  describeEventTypes().map((entry) => [entry.type, ajv.compile(entry.schema)]),
);

export interface RecordedEvent {
  id: string;
  type: string;
  payload: unknown;
}

/** Every event of the file's database, oldest first. */
export function recordedEvents(em: EntityManager): Promise<RecordedEvent[]> {
  return em.execute<RecordedEvent[]>('select id, type, payload from events order by created_at, id');
}

/** The events whose data their type's catalog schema refuses (or whose type the catalog lacks), with Ajv's errors. */
export function catalogMisfits(events: readonly RecordedEvent[]) {
  return events.flatMap((event) => {
    const validate = validators.get(event.type);
    if (!validate) return [{ id: event.id, type: event.type, errors: 'no such type in the catalog' }];
    return validate(event.payload) ? [] : [{ id: event.id, type: event.type, errors: ajv.errorsText(validate.errors) }];
  });
}

/** The types of `expected` that no event is of. */
export function typesMissing(events: readonly RecordedEvent[], expected: readonly string[]): string[] {
  const seen = new Set(events.map((event) => event.type));
  return expected.filter((type) => !seen.has(type));
}
