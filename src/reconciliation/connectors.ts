// Which connectors the daily reconciliation covers, and what of our books each one answers for
// (decisions §13): every configured connector with a settlement record (`settlementReport`), the
// sandbox first and then the live ones in LIVE_CONNECTORS order, as the registry lists them. A
// connector's day is matched against the transfers it took and the credits that came through its
// own virtual-account providers, never against another connector's.
import type { SettlementReport } from '../connectors/capabilities.ts';
import type { Providers } from '../connectors/registry.ts';
import type { ConnectorScope } from '../transfers/service.ts';

export interface ReconciledConnector {
  name: string;
  /**
   * Its transfers: those recorded as its own and, for the sandbox connector (the registry's first),
   * those no connector is recorded on, which it made before connectors were (migration 0023).
   */
  transfers: ConnectorScope;
  /** The virtual-account providers whose inbound credits are this connector's (their `provider` on the credit). */
  creditProviders: readonly string[];
  settlementReport(date: string): Promise<SettlementReport>;
}

export function reconciledConnectors(
  providers: Pick<Providers, 'connectors' | 'virtualAccounts'>,
): ReconciledConnector[] {
  const sandbox = providers.connectors[0]?.name;
  return providers.connectors.flatMap((connector) => {
    const report = connector.settlementReport?.bind(connector);
    if (!report) return [];
    return [
      {
        name: connector.name,
        transfers: { connector: connector.name, orUnattributed: connector.name === sandbox },
        creditProviders: providers.virtualAccounts
          .filter((entry) => entry.connector === connector.name)
          .map((entry) => entry.provider.name),
        settlementReport: report,
      },
    ];
  });
}
