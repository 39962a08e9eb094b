// The connector kinds are listed twice: their settings alone for configuration
// (src/connectors/settings.ts) and their definitions for the registry (src/connectors/index.ts).
// The two lists name the same kinds, in the same order, each with the same variables.
import { describe, expect, it } from 'vitest';
import { CONNECTORS } from '../../src/connectors/index.ts';
import { CONNECTOR_SETTINGS } from '../../src/connectors/settings.ts';

describe('connector lists', () => {
  it('name the same kinds in the same order', () => {
    expect(CONNECTOR_SETTINGS.map((kind) => kind.name)).toEqual(CONNECTORS.map((kind) => kind.name));
    expect(CONNECTORS.map((kind) => kind.name)).toEqual(['generic', 'paystack']);
  });

  it('give each kind the same variables and the same reading of them', () => {
    for (const [index, settings] of CONNECTOR_SETTINGS.entries()) {
      const kind = CONNECTORS[index]!;
      expect(Object.keys(settings.secrets)).toEqual(Object.keys(kind.secrets));
      expect(settings.baseUrls).toEqual(kind.baseUrls);
      expect(settings.parse({})).toEqual(kind.parse({}));
    }
  });
});
