// The connector kinds a deployment can name in LIVE_CONNECTORS, one line each. The sandbox
// connector is not among them: it serves test keys only and is always there
// (src/providers/registry.ts).
import type { RegisteredConnector } from './types.ts';

export const CONNECTORS: readonly RegisteredConnector[] = [];

export function connectorKind(name: string): RegisteredConnector | undefined {
  return CONNECTORS.find((kind) => kind.name === name);
}
