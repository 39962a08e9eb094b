// The paystack connector against the Paystack simulator (test/simulators/paystack.ts,
// docs/connectors/paystack.md) through the connector conformance suite, steered by the
// simulator's own methods: Paystack has no magic accounts, so a transfer is ended by
// `finishTransfer`, and the refusal that takes nothing is a balance too low for it.
import { paystackConnector } from '../../src/connectors/paystack/index.ts';
import { UNRESOLVABLE_ACCOUNT, type SentWebhook, startPaystackSimulator } from '../simulators/paystack.ts';
import { startFaultProxy } from '../support/fault-proxy.ts';
import { describeConnectorConformance } from './conformance.ts';

const CALLBACK_PATH = '/provider-callbacks/paystack';
const BALANCE_KOBO = 1_000_000_000_00;

describeConnectorConformance('paystack', async ({ receiverUrl, timeoutMs }) => {
  const sim = await startPaystackSimulator();
  sim.webhookUrl = `${receiverUrl}${CALLBACK_PATH}`;
  const proxy = await startFaultProxy(sim.url);
  const connector = paystackConnector.create(
    paystackConnector.settings.parse({ PAYSTACK_SECRET_KEY: sim.secretKey, PAYSTACK_BASE_URL: proxy.url }),
    { timeoutMs },
  );
  const redelivered = new Set<SentWebhook>();
  return {
    connector,
    proxy,
    callbackPath: CALLBACK_PATH,
    routes: {
      listBanks: 'GET /bank',
      nameEnquiry: 'GET /bank/resolve',
      submission: 'POST /transfer',
      status: 'GET /transfer/verify/',
      allocate: 'POST /dedicated_account',
      close: 'DELETE /dedicated_account/',
      // The report reads two lists; the fault meets the first, the day's transfers.
      settlement: 'GET /transfer',
    },
    knownAccount: { bankCode: '058', accountNumber: '0123456789', accountName: 'TEST ACCOUNT 6789' },
    // `GET /bank/resolve` gives the account's name and no NIP session id.
    nameEnquirySession: null,
    unknownAccount: UNRESOLVABLE_ACCOUNT,
    // Every Paystack transfer stays pending until Paystack ends it.
    pendingAccount: '0123456789',
    async endTransfer(reference, outcome) {
      await sim.finishTransfer(reference, outcome === 'successful' ? 'success' : 'failed');
    },
    // "Your balance is not enough to fulfil this request": Paystack took nothing.
    async refusingNotTaken(submit) {
      sim.setBalance(0);
      try {
        return await submit('0123456789');
      } finally {
        sim.setBalance(BALANCE_KOBO);
      }
    },
    async takenTransfers() {
      return [...sim.transfers.values()].map((transfer) => ({
        reference: transfer.reference,
        amountMinor: transfer.amount,
      }));
    },
    async credit(_route, accountNumber, amountMinor) {
      const { charge } = await sim.creditDedicatedAccount(accountNumber, amountMinor);
      return { transactionReference: charge.reference, feeMinor: charge.fees };
    },
    async accountOpen(accountNumber) {
      return sim.accounts.some((account) => account.account_number === accountNumber && account.active);
    },
    // Paystack's default dedicated-account bank, named by the code of its bank list.
    virtualAccountBank: { code: '035', name: 'Wema Bank' },
    // Paystack sends a webhook again until it is answered 200; the simulator does so when asked.
    async redeliver() {
      for (const webhook of [...sim.webhooks]) {
        if (webhook.answered === 200 || redelivered.has(webhook)) continue;
        redelivered.add(webhook);
        await sim.resend(webhook);
      }
    },
    async close() {
      await proxy.close();
      await sim.close();
    },
  };
});
