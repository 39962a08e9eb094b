// The event catalog (src/events/catalog.ts, decisions §15): one entry per event type and no other,
// each sample fitting its zod schema, and each JSON Schema the route serves a valid draft 2020-12
// schema that accepts the sample and refuses what the zod schema refuses.
import { Ajv2020 } from 'ajv/dist/2020.js';
import { describe, expect, it } from 'vitest';
import { type EventType, describeEventTypes, parseEventData, sampleData } from '../../src/events/catalog.ts';
import { EVENT_CATALOG, EVENT_TYPES } from '../../src/features.ts';

const ajv = new Ajv2020({ strict: true, allErrors: true });

describe('the event catalog', () => {
  it('has an entry for every event type and none for another, in EVENT_TYPES order', () => {
    expect(Object.keys(EVENT_CATALOG).sort()).toEqual([...EVENT_TYPES].sort());
    expect(describeEventTypes().map((entry) => entry.type)).toEqual([...EVENT_TYPES]);
  });

  it.each(EVENT_TYPES)('%s: a description, a sample its schema parses unchanged', (type) => {
    const { description, data } = EVENT_CATALOG[type];
    expect(description.length).toBeGreaterThan(10);
    const sample = sampleData(type);
    expect(data.parse(sample)).toEqual(sample);
  });

  it.each(EVENT_TYPES)(
    '%s: its JSON Schema is valid and accepts the sample, and only what the schema knows',
    (type) => {
      const { schema } = describeEventTypes().find((entry) => entry.type === type)!;
      expect(schema.$schema).toBe('https://json-schema.org/draft/2020-12/schema');
      expect(ajv.validateSchema(schema), JSON.stringify(ajv.errors)).toBe(true);
      const validate = ajv.compile(schema);
      const sample = sampleData(type);
      expect(validate(sample), JSON.stringify(validate.errors)).toBe(true);
      // The recorded payload is what the zod schema parses; the JSON Schema admits no field beyond it.
      expect(validate({ ...sample, not_in_the_catalog: true })).toBe(false);
    },
  );

  it('gives a fresh copy of a sample each time', () => {
    const first = sampleData('card.funded');
    first.amount_minor = 1;
    expect(sampleData('card.funded').amount_minor).toBe(500_000);
  });

  it('records what the schema parses, and refuses a payload that does not fit, naming the type and the field', () => {
    const settled = sampleData('transfer.settled');
    expect(parseEventData('transfer.settled', settled)).toEqual(settled);
    const { completedAt: _, ...created } = settled;
    expect(parseEventData('transfer.created', { ...created, status: 'pending' })).not.toHaveProperty('completedAt');
    expect(() => parseEventData('transfer.settled', { ...settled, amount_minor: '1500000' })).toThrow(
      /a transfer\.settled payload does not fit its catalog schema:[\s\S]*amount_minor/,
    );
    expect(() => parseEventData('card.auto_reloaded', { ...sampleData('card.auto_reloaded'), funding: null })).toThrow(
      /card\.auto_reloaded[\s\S]*funding/,
    );
    expect(() => parseEventData('no.such.event' as EventType, {})).toThrow(
      'event type no.such.event is not in the event catalog',
    );
  });
});
