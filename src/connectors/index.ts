// The connector kinds a deployment can name in LIVE_CONNECTORS, one line each, as the registry
// (./registry.ts) builds them; ./settings.ts lists the same kinds' settings alone, for
// configuration. The sandbox connector is not among them: it serves test keys only and is always
// there.
import { genericConnector } from './generic/index.ts';
import { paystackConnector } from './paystack/index.ts';
import { type RegisteredConnector, registerConnector } from './types.ts';

export const CONNECTORS: readonly RegisteredConnector[] = [
  registerConnector(genericConnector),
  registerConnector(paystackConnector),
];

export function connectorKind(name: string): RegisteredConnector | undefined {
  return CONNECTORS.find((kind) => kind.name === name);
}
