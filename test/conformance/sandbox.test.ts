// The sandbox connector (the generic connector pointed at the bundled sandbox bank) through the
// connector conformance suite: the real sandbox bank, its state in this file's database, steered by
// its magic accounts and /control routes.
import { randomUUID } from 'node:crypto';
import { createSandboxConnector } from '../../src/connectors/sandbox/index.ts';
import { TEST_CALLBACK_SECRET, TEST_SANDBOX_BANK_API_KEY } from '../support/app.ts';
import { createTestDatabase } from '../support/database.ts';
import { startFaultProxy } from '../support/fault-proxy.ts';
import { type TestSandboxBank, startSandboxBank } from '../support/sandbox-bank.ts';
import { GENERIC_CONTRACT_OPTIONS, describeConnectorConformance, genericContractRoutes } from './conformance.ts';

/**
 * One call of each kind straight to the bank before the checks: the first of each (its route's
 * first database statements) can take longer than the suite's short timeout on a busy machine.
 */
async function warmUp(bank: TestSandboxBank): Promise<void> {
  const reference = `warm-up-${randomUUID()}`;
  await bank.call('GET', '/banks');
  await bank.call('POST', '/name-enquiry', { bank_code: '058', account_number: '0123456789' });
  const transfer = { reference, amount_minor: 100, currency: 'NGN', bank_code: '058', account_number: '2222222222' };
  await bank.call('POST', '/transfers', { ...transfer, account_name: 'WARM UP', narration: 'warm up' });
  await bank.call('GET', `/transfers/${reference}`);
  await bank.call('POST', '/providers/wema/virtual-accounts', {
    reference,
    account_name: 'WARM UP',
    customer_id: reference,
  });
  await bank.call('GET', `/statements/settlement/${new Date().toISOString().slice(0, 10)}`);
}

describeConnectorConformance(
  'sandbox',
  async ({ receiverUrl, timeoutMs }) => {
    const db = await createTestDatabase(5);
    // The bank posts its callbacks to `<gatewayUrl>/provider-callbacks/sandbox`: the suite's receiver.
    const bank = await startSandboxBank({ databaseUrl: db.url, gatewayUrl: receiverUrl, completionDelayMs: 100 });
    const proxy = await startFaultProxy(bank.url);
    await warmUp(bank);
    const connector = createSandboxConnector({
      sandboxBankUrl: proxy.url,
      PROVIDER_TIMEOUT_MS: timeoutMs,
      sandboxBankApiKey: TEST_SANDBOX_BANK_API_KEY,
      providerCallbackSecret: TEST_CALLBACK_SECRET,
    });
    const control = async (path: string, body?: unknown) => {
      const answer = await bank.control(path, body);
      if (answer.status >= 300) throw new Error(`${path}: ${answer.status} ${JSON.stringify(answer.body)}`);
      return answer.body;
    };
    return {
      connector,
      proxy,
      callbackPath: '/provider-callbacks/sandbox',
      // The suite's virtual accounts open at Wema (virtualAccountBank below), below its prefix.
      routes: genericContractRoutes('/providers/wema'),
      knownAccount: { bankCode: '058', accountNumber: '0123456789', accountName: 'CHINEDU OLAWALE' },
      nameEnquirySession: /^\d{30}$/,
      unknownAccount: '0000000000',
      // Decisions §9: accepted, never confirmed by the bank on its own.
      pendingAccount: '2222222222',
      async endTransfer(reference, outcome) {
        await control(`/control/transfers/${reference}/${outcome === 'successful' ? 'confirm' : 'fail'}`);
      },
      // 0000000000 at submission: the contract's 422, refused and not taken.
      refusingNotTaken: (submit) => submit('0000000000'),
      async takenTransfers() {
        const { rows } = await bank.store.pool.query<{ reference: string; amount_minor: string }>(
          'select reference, amount_minor from sandbox_bank.transfers order by created_at',
        );
        return rows.map((row) => ({ reference: row.reference, amountMinor: Number(row.amount_minor) }));
      },
      async credit(route, accountNumber, amountMinor) {
        const answer = await control(
          `/control/providers/${route.provider.name}/virtual-accounts/${accountNumber}/credits`,
          { amount_minor: amountMinor },
        );
        return { transactionReference: answer.transaction_reference as string };
      },
      async accountOpen(accountNumber) {
        const { rows } = await bank.store.pool.query<{ status: string }>(
          'select status from sandbox_bank.virtual_accounts where account_number = $1',
          [accountNumber],
        );
        return rows[0]?.status === 'active';
      },
      virtualAccountBank: { code: '035', name: 'Wema Bank' },
      async close() {
        await proxy.close();
        await bank.close();
        await db.drop();
      },
    };
  },
  GENERIC_CONTRACT_OPTIONS,
);
