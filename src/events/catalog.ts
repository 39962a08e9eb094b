// The event catalog (decisions §15): for every event type, what it announces, the zod schema of its
// `data`, and a sample of it. Each feature declares its own event types (src/<feature>/event-types.ts,
// listed in its manifest's `events`), and src/features.ts declares them all here, in the features'
// order, before anything records an event. The recording functions (events.ts) take each payload
// typed by its type's schema and record what the schema parses, so the catalog's schemas are the
// payloads' own: `GET /api/v1/event-types` shows them as JSON Schema, and test events send the
// samples. Most payloads are a resource as the API shows it, so their schemas are the views' own.
import { z } from 'zod';

/**
 * The `data` of each event type, as its schema accepts it: every feature adds its own types to this
 * interface (`declare module '../events/catalog.ts'`, beside its declarations), so that a call
 * site's type and payload must agree without this module knowing any feature.
 */
// eslint-disable-next-line @typescript-eslint/no-empty-object-type -- filled by the features' declarations
export interface EventDataByType {}

export type EventType = Extract<keyof EventDataByType, string>;

/** What a payload of event type T must be (what its schema accepts). */
export type EventData<T extends EventType> = EventDataByType[T];

/** One event type's description, the schema of its data, and a sample of it. */
export interface EventTypeEntry<Data extends z.ZodType = z.ZodType> {
  description: string;
  data: Data;
  sample: z.input<Data>;
}

/** A feature's event types, by name. */
export type EventTypeEntries = Readonly<Record<string, EventTypeEntry>>;

/** The payload types of a feature's event types, for its `EventDataByType` declaration. */
export type EventDataOf<Entries extends Record<string, { data: z.ZodType }>> = {
  [Type in keyof Entries]: z.input<Entries[Type]['data']>;
};

/** One catalog entry; the sample is checked against the schema where it is written. */
export function eventType<Data extends z.ZodType>(
  description: string,
  data: Data,
  sample: z.input<Data>,
): EventTypeEntry<Data> {
  return { description, data, sample };
}

const catalog = new Map<string, EventTypeEntry>();
let described: readonly EventTypeDescription[] | undefined;

/**
 * Adds the features' event types to the catalog, in the order given (the order `GET
 * /api/v1/event-types` lists them in). A name declared twice throws: each type has one owner.
 */
export function declareEventTypes(...parts: readonly EventTypeEntries[]): void {
  for (const part of parts) {
    for (const [type, entry] of Object.entries(part)) {
      if (catalog.has(type)) throw new Error(`event type ${type} is declared twice`);
      catalog.set(type, entry);
    }
  }
  described = undefined;
}

/** Every event type declared, in the catalog's order. */
export function eventTypes(): EventType[] {
  return [...catalog.keys()] as EventType[];
}

/** Whether `type` is one of the catalog's event types (any of them may be sent as a test event). */
export function isEventType(type: string): type is EventType {
  return catalog.has(type);
}

function entryOf(type: string): EventTypeEntry {
  const entry = catalog.get(type);
  if (!entry) {
    throw new Error(`event type ${type} is not in the event catalog (its feature's manifest declares its event types)`);
  }
  return entry;
}

/** The payload as recorded: what the type's schema makes of it. Throws (a plain Error) when it does not fit. */
export function parseEventData(type: EventType, payload: unknown): Record<string, unknown> {
  const parsed = entryOf(type).data.safeParse(payload);
  if (!parsed.success) {
    throw new Error(`a ${type} payload does not fit its catalog schema: ${z.prettifyError(parsed.error)}`, {
      cause: parsed.error,
    });
  }
  return parsed.data as Record<string, unknown>;
}

/** A sample `data` of the type, fitting its schema: a fresh copy each call. */
export function sampleData<T extends EventType>(type: T): EventData<T> {
  return structuredClone(entryOf(type).sample) as EventData<T>;
}

export interface EventTypeDescription {
  type: EventType;
  description: string;
  /** The JSON Schema (draft 2020-12) of the event's `data`. */
  schema: Record<string, unknown>;
}

/** Every event type, in the catalog's order, with its description and the JSON Schema of its data. */
export function describeEventTypes(): readonly EventTypeDescription[] {
  described ??= eventTypes().map((type) => ({
    type,
    description: entryOf(type).description,
    schema: z.toJSONSchema(entryOf(type).data),
  }));
  return described;
}
