// A key mode's bank list comes from the first of its transfers connectors whose list answers
// (decisions §13): the first connector being down must not refuse a transfer the next can take.
import { describe, expect, it } from 'vitest';
import type { Connector } from '../../src/connectors/types.ts';
import { banksOf, providersOf } from '../../src/connectors/registry.ts';
import { ProviderError } from '../../src/connectors/capabilities.ts';
import type { BankSwitch } from '../../src/connectors/capabilities.ts';

function bankSwitch(name: string, banks: () => Promise<{ code: string; name: string; slug: string }[]>): BankSwitch {
  const unused = () => Promise.reject(new Error(`${name}: not used here`));
  return {
    name,
    listBanks: banks,
    nameEnquiry: unused,
    submitTransfer: unused,
    transferStatus: unused,
    settlementReport: unused,
  };
}

function connector(name: string, modes: Connector['modes'], transfers: BankSwitch): Connector {
  return {
    name,
    modes,
    capabilities: ['transfers', 'cards', 'identity'],
    transfers,
    cards: {} as Connector['cards'],
    identity: {} as Connector['identity'],
  };
}

const down = (name: string) => () =>
  Promise.reject(new ProviderError(name, 'network_error', true, `${name} unreachable`));

describe('banksOf', () => {
  const sandbox = connector(
    'sandbox',
    ['test'],
    bankSwitch('sandbox', async () => [{ code: '999', name: 'Sandbox', slug: 's' }]),
  );

  it("takes the next live connector's list when the first is down, and never the sandbox's", async () => {
    const providers = providersOf(sandbox, [
      connector('paystack', ['live'], bankSwitch('paystack', down('paystack'))),
      connector(
        'generic',
        ['live'],
        bankSwitch('generic', async () => [{ code: '058', name: 'GTBank', slug: 'gtb' }]),
      ),
    ]);
    expect(await banksOf(providers, 'live').find('058')).toEqual({ code: '058', name: 'GTBank', slug: 'gtb' });
    expect(await banksOf(providers, 'live').find('999')).toBeUndefined();
    expect(await banksOf(providers, 'test').list()).toEqual([{ code: '999', name: 'Sandbox', slug: 's' }]);
  });

  it('fails with the last fault when every connector is down', async () => {
    const providers = providersOf(sandbox, [
      connector('paystack', ['live'], bankSwitch('paystack', down('paystack'))),
      connector('generic', ['live'], bankSwitch('generic', down('generic'))),
    ]);
    await expect(banksOf(providers, 'live').list()).rejects.toThrow('generic unreachable');
  });
});
