// Which connectors the daily reconciliation covers and what of our books each answers for
// (src/reconciliation/connectors.ts): built from the registry as the worker builds it.
import { describe, expect, it } from 'vitest';
import type { Connector } from '../../src/connectors/types.ts';
import { providersOf } from '../../src/connectors/registry.ts';
import type { SettlementReport, VirtualAccountProvider } from '../../src/connectors/capabilities.ts';
import { reconciledConnectors } from '../../src/reconciliation/connectors.ts';

const accounts = (name: string): VirtualAccountProvider => ({
  name,
  allocate: () => Promise.reject(new Error('not in this test')),
  close: () => Promise.reject(new Error('not in this test')),
});

const route = (name: string) => ({
  provider: accounts(name),
  countries: ['NG'],
  currencies: ['NGN'],
  supportsPreferredBank: false,
});

const report =
  (by: string) =>
  (date: string): Promise<SettlementReport> =>
    Promise.resolve({ date, generatedAt: by, items: [] });

// What providersOf requires of a sandbox; reconciliation reads none of it.
const unused = {} as NonNullable<Connector['transfers']> &
  NonNullable<Connector['cards']> &
  NonNullable<Connector['identity']>;

const sandbox: Connector = {
  name: 'sandbox',
  modes: ['test'],
  capabilities: ['transfers', 'virtual_accounts', 'identity', 'cards'],
  transfers: unused,
  cards: unused,
  identity: unused,
  virtualAccounts: [route('wema'), route('providus')],
  settlementReport: report('sandbox'),
};

const live = (name: string, fields: Partial<Connector> = {}): Connector => ({
  name,
  modes: ['live'],
  capabilities: ['transfers', 'virtual_accounts'],
  ...fields,
});

describe('reconciledConnectors', () => {
  it('covers the sandbox and then each live connector with a settlement record, in LIVE_CONNECTORS order', async () => {
    const providers = providersOf(sandbox, [
      live('paystack', { virtualAccounts: [route('paystack')], settlementReport: report('paystack') }),
      // No settlement record: nothing to reconcile it against.
      live('cards-only', { capabilities: ['cards'] }),
      live('generic', { settlementReport: report('generic') }),
    ]);
    const connectors = reconciledConnectors(providers);
    expect(connectors.map(({ name, transfers, creditProviders }) => ({ name, transfers, creditProviders }))).toEqual([
      // Transfers no connector is recorded on were made before connectors were: the sandbox's.
      {
        name: 'sandbox',
        transfers: { connector: 'sandbox', orUnattributed: true },
        creditProviders: ['wema', 'providus'],
      },
      { name: 'paystack', transfers: { connector: 'paystack', orUnattributed: false }, creditProviders: ['paystack'] },
      { name: 'generic', transfers: { connector: 'generic', orUnattributed: false }, creditProviders: [] },
    ]);
    // Each reads its own provider's record.
    expect(
      await Promise.all(
        connectors.map(async (connector) => (await connector.settlementReport('2026-11-23')).generatedAt),
      ),
    ).toEqual(['sandbox', 'paystack', 'generic']);
  });

  it('covers the sandbox alone when no live connector is configured', () => {
    expect(reconciledConnectors(providersOf(sandbox, [])).map((connector) => connector.name)).toEqual(['sandbox']);
  });
});
