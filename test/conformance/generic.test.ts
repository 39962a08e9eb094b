// The generic connector against the generic test bank (test/simulators/generic-bank.ts,
// docs/connectors/test-bank.md) through the connector conformance suite: the bank in this
// process, steered by its magic accounts and /control routes, its journal read as its record.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createGenericConnector } from '../../src/connectors/generic/index.ts';
import { MAGIC_ACCOUNTS, startGenericTestBank } from '../simulators/generic-bank.ts';
import type { Entry } from '../simulators/generic-bank/bank.ts';
import { startFaultProxy } from '../support/fault-proxy.ts';
import { GENERIC_CONTRACT_OPTIONS, describeConnectorConformance, genericContractRoutes } from './conformance.ts';

const API_KEY = 'conformance_bank_key_5d1e7a';
const SECRET = `whsec_${Buffer.from('generic-conformance-signing-key-32').toString('base64')}`;
const CALLBACK_PATH = '/provider-callbacks/generic';

describeConnectorConformance(
  'generic',
  async ({ receiverUrl, timeoutMs }) => {
    const dataDir = mkdtempSync(join(tmpdir(), 'conformance-generic-'));
    const bank = await startGenericTestBank({
      apiKey: API_KEY,
      webhookSecret: SECRET,
      dataDir,
      callbackUrl: `${receiverUrl}${CALLBACK_PATH}`,
      completionDelayMs: 100,
      callbackRetryBaseMs: 50,
    });
    const proxy = await startFaultProxy(bank.url);
    const connector = createGenericConnector({
      name: 'generic',
      modes: ['live'],
      baseUrl: proxy.url,
      apiKey: API_KEY,
      webhookSecret: SECRET,
      capabilities: ['transfers', 'virtual_accounts'],
      timeoutMs,
    });
    const control = async (path: string, body: unknown = {}) => {
      const response = await fetch(`${bank.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${API_KEY}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      const answer = (await response.json()) as Record<string, unknown>;
      if (!response.ok) throw new Error(`${path}: ${response.status} ${JSON.stringify(answer)}`);
      return answer;
    };
    /** The bank's record: its journal, every line fsync'd before it answered. */
    const journal = (): Entry[] =>
      readFileSync(bank.journalPath, 'utf8')
        .split('\n')
        .filter(Boolean)
        .map((line) => JSON.parse(line) as Entry);
    return {
      connector,
      proxy,
      callbackPath: CALLBACK_PATH,
      routes: genericContractRoutes(),
      knownAccount: { bankCode: '058', accountNumber: '0123456789', accountName: 'JUMOKE SANI' },
      nameEnquirySession: /^\d{30}$/,
      unknownAccount: MAGIC_ACCOUNTS.invalid,
      pendingAccount: MAGIC_ACCOUNTS.neverCompletes,
      async endTransfer(reference, outcome) {
        await control(
          `/control/transfers/${encodeURIComponent(reference)}/${outcome === 'successful' ? 'complete' : 'fail'}`,
        );
      },
      // 4444444444: 422 refused_not_taken, every time.
      refusingNotTaken: (submit) => submit(MAGIC_ACCOUNTS.refused),
      async takenTransfers() {
        return journal().flatMap((entry) =>
          entry.kind === 'transfer.accepted'
            ? [{ reference: entry.transfer.request.reference, amountMinor: entry.transfer.request.amount_minor }]
            : [],
        );
      },
      async credit(_route, accountNumber, amountMinor) {
        const answer = await control(`/control/virtual-accounts/${accountNumber}/credits`, {
          amount_minor: amountMinor,
          sender_name: 'EMEKA EZE',
        });
        return { transactionReference: answer.transaction_reference as string };
      },
      async accountOpen(accountNumber) {
        let open = false;
        for (const entry of journal()) {
          if (entry.kind === 'account.opened' && entry.account.accountNumber === accountNumber) open = true;
          if (entry.kind === 'account.closed' && entry.accountNumber === accountNumber) open = false;
        }
        return open;
      },
      virtualAccountBank: { code: '035', name: 'Wema Bank' },
      async close() {
        await proxy.close();
        await bank.stop();
        rmSync(dataDir, { recursive: true, force: true });
      },
    };
  },
  GENERIC_CONTRACT_OPTIONS,
);
