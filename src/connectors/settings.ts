// The settings of the connector kinds a deployment can name in LIVE_CONNECTORS, one line each, as
// configuration (src/config.ts) reads them: each kind's settings.ts, none of its client. The kinds
// themselves, with how each is built, are listed beside them in ./index.ts.
import { genericSettings } from './generic/settings.ts';
import { paystackSettings } from './paystack/settings.ts';
import { type RegisteredSettings, registerSettings } from './types.ts';

export const CONNECTOR_SETTINGS: readonly RegisteredSettings[] = [
  registerSettings(genericSettings),
  registerSettings(paystackSettings),
];

export function connectorSettings(name: string): RegisteredSettings | undefined {
  return CONNECTOR_SETTINGS.find((kind) => kind.name === name);
}
