// One conformance suite for every connector (decisions §13): the same checks, with the same values
// to the kobo, run against each connector and the provider it speaks to. What differs per provider
// — its magic accounts or simulator controls, where its callbacks go, what its own record says —
// is the harness's (ConformanceHarness); everything the gateway relies on is asserted here, once:
// names and banks, a transfer's life from submission to its end, each error class the wire can
// produce (made by the fault proxy of test/support/fault-proxy.ts, the same bytes for every
// provider), the lost answer and its retry, signed callbacks, virtual accounts and the day's
// settlement report. A check is skipped for a target only where the provider's published behaviour
// lacks it, and the harness says why.
import { randomUUID } from 'node:crypto';
import type { IncomingHttpHeaders } from 'node:http';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { CONTRACT_PATHS } from '../../src/connectors/generic/contract.ts';
import type { Connector, NormalizedCallback, VirtualAccountRoute } from '../../src/connectors/types.ts';
import type {
  AllocatedVirtualAccount,
  BankSwitch,
  NameEnquiryResult,
  ProviderError,
  ProviderOutcome,
  SubmitTransferInput,
} from '../../src/connectors/capabilities.ts';
import { eventually } from '../support/eventually.ts';
import type { FaultProxy, ProxyFault, RouteMatch } from '../support/fault-proxy.ts';
import { providerError } from '../support/provider-error.ts';
import { type ReceivedWebhook, type Receiver, startReceiver } from '../support/receiver.ts';

/** Every connector's per-call timeout in this suite: short, so that hangs cost little. */
export const CONFORMANCE_TIMEOUT_MS = 500;
/** A bound on one error-class check: a connector that waits past its timeout fails it. */
const ERROR_CHECK_BOUND_MS = 5_000;

export interface ConformanceContext {
  /** Where the provider must send its callbacks: the suite's receiver (the harness adds its path). */
  receiverUrl: string;
  timeoutMs: number;
}

/** The operations the suite calls, each named by the provider call the proxy matches for it. */
export type Operation = 'listBanks' | 'nameEnquiry' | 'submission' | 'status' | 'allocate' | 'close' | 'settlement';

export interface ConformanceHarness {
  /** The connector under test, configured with the provider at `proxy.url`. */
  connector: Connector;
  /** Between the connector and the provider. */
  proxy: FaultProxy;
  /** The path below the receiver's URL the provider posts its callbacks to. */
  callbackPath: string;
  /** The call of the provider's API that each operation's fault is planned on (proxy route match). */
  routes: Record<Operation, RouteMatch>;
  /** A recipient the provider resolves, and the name it gives, to the letter. */
  knownAccount: { bankCode: string; accountNumber: string; accountName: string };
  /** What the name enquiry's session id looks like; null where the provider gives none. */
  nameEnquirySession: RegExp | null;
  /** A 10-digit number the provider's name enquiry does not resolve. */
  unknownAccount: string;
  /** Transfers to this account are taken and stay pending until `endTransfer`. */
  pendingAccount: string;
  /** Has the provider end one of its pending transfers (its completion callback follows). */
  endTransfer(reference: string, outcome: 'successful' | 'failed'): Promise<void>;
  /** Runs a submission (to the account given) while the provider refuses transfers without taking them. */
  refusingNotTaken<T>(submit: (accountNumber: string) => Promise<T>): Promise<T>;
  /** Every transfer the provider has taken, from its own record (our reference as the provider keeps it). */
  takenTransfers(): Promise<{ reference: string; amountMinor: number }[]>;
  /**
   * Money arrives in one of the provider's virtual accounts (its credit callback follows), and what
   * the provider keeps of it, where it keeps anything (`feeMinor`, 0 when absent).
   */
  credit(
    route: VirtualAccountRoute,
    accountNumber: string,
    amountMinor: number,
  ): Promise<{ transactionReference: string; feeMinor?: number }>;
  /** Whether the provider's record has the account open. */
  accountOpen(accountNumber: string): Promise<boolean>;
  /** The bank virtual accounts are opened at (the provider's default). */
  virtualAccountBank: { code: string; name: string };
  /**
   * Has the provider send again the callbacks it has had no 2xx for — for a provider whose
   * simulator repeats them only when asked (undefined where it retries on its own).
   */
  redeliver?(): Promise<void>;
  close(): Promise<void>;
}

export type MakeHarness = (context: ConformanceContext) => Promise<ConformanceHarness>;

/** One error-class check: an operation and the fault it meets (`refused`: nothing listening). */
export type ErrorCheck = `${Operation}/${ProxyFault | 'refused'}`;

export interface ConformanceOptions {
  /**
   * Checks the provider's published behaviour gives nothing to hold the connector to, each with
   * the reason (shown in the check's name). Never a way around a failure.
   */
  notApplicable?: Partial<Record<ErrorCheck, string>>;
}

/** An error class on the wire, how the proxy makes it, and what the connector must make of it. */
interface ErrorClass {
  name: string;
  fault: ProxyFault | 'refused';
  outcome: ProviderOutcome;
  /** Whether the provider got the call (and did the work) before the caller met the fault. */
  reachesProvider: boolean;
}

const TRANSIENT_CLASSES: ErrorClass[] = [
  { name: 'connection refused', fault: 'refused', outcome: 'network_error', reachesProvider: false },
  { name: 'a hang past the timeout', fault: 'hang', outcome: 'timeout', reachesProvider: false },
  { name: 'connection reset', fault: 'reset', outcome: 'network_error', reachesProvider: false },
  { name: "a proxy's HTML 502 page", fault: 'html_502', outcome: 'unavailable', reachesProvider: false },
  { name: 'a 500', fault: 'http_500', outcome: 'unavailable', reachesProvider: false },
  { name: 'a 429', fault: 'http_429', outcome: 'unavailable', reachesProvider: false },
  { name: 'a 200 that is not JSON', fault: 'not_json', outcome: 'unknown', reachesProvider: true },
  { name: 'a 200 with its fields missing', fault: 'missing_fields', outcome: 'unknown', reachesProvider: true },
];

/** What the generic HTTP bank contract v1 leaves open, for the connectors that speak it (sandbox, generic). */
export const GENERIC_CONTRACT_OPTIONS: ConformanceOptions = {
  notApplicable: {
    // The contract's close answers 200, "the body, if any, is not read"
    // (docs/generic-bank-contract-v1.yaml): it has no fields to go missing.
    'close/missing_fields': 'the contract gives a close no answer fields',
  },
};

/** A contract path up to its first parameter: the prefix the proxy matches every such call by. */
const prefixOf = (path: string) => path.slice(0, path.indexOf('{'));

/**
 * The calls of the generic HTTP bank contract v1 each operation's fault is planned on, from the
 * contract's own paths; `virtualAccountsAt` is where the bank serves its virtual accounts (the
 * sandbox bank serves them per provider, below `/providers/<name>`).
 */
export function genericContractRoutes(virtualAccountsAt = ''): Record<Operation, RouteMatch> {
  return {
    listBanks: `GET ${CONTRACT_PATHS.banks}`,
    nameEnquiry: `POST ${CONTRACT_PATHS.nameEnquiry}`,
    submission: `POST ${CONTRACT_PATHS.transfers}`,
    status: `GET ${prefixOf(CONTRACT_PATHS.transfer)}`,
    allocate: `POST ${virtualAccountsAt}${CONTRACT_PATHS.virtualAccounts}`,
    close: `POST ${virtualAccountsAt}${prefixOf(CONTRACT_PATHS.closeVirtualAccount)}`,
    settlement: `GET ${prefixOf(CONTRACT_PATHS.settlementStatement)}`,
  };
}

const TRANSFER_AMOUNT = 1_234_567;
const CREDIT_AMOUNT = 98_765;

const today = () => new Date().toISOString().slice(0, 10);

export function describeConnectorConformance(
  target: string,
  makeHarness: MakeHarness,
  options: ConformanceOptions = {},
): void {
  describe(`connector conformance: ${target}`, () => {
    let h: ConformanceHarness;
    let receiver: Receiver;
    let pendingRecipient: NameEnquiryResult;
    /** Keys (a reference, a transaction reference) whose next callback the receiver answers 500. */
    const refuseOnce = new Set<string>();

    beforeAll(async () => {
      receiver = await startReceiver({
        answer: (request) => {
          for (const key of refuseOnce) {
            if (!request.body.includes(key)) continue;
            refuseOnce.delete(key);
            return { status: 500, body: 'try again' };
          }
          return { status: 200, body: 'ok' };
        },
      });
      h = await makeHarness({ receiverUrl: receiver.url, timeoutMs: CONFORMANCE_TIMEOUT_MS });
      pendingRecipient = await h.connector.transfers!.nameEnquiry(h.knownAccount.bankCode, h.pendingAccount);
    });

    afterEach(() => {
      // Every fault a check planned was met: none passed by never reaching the provider's call.
      const left = h.proxy.planned();
      h.proxy.clear();
      expect(left).toEqual([]);
    });

    afterAll(async () => {
      await h?.close();
      await receiver?.close();
    });

    const transfers = (): BankSwitch => h.connector.transfers!;
    const route = (): VirtualAccountRoute => h.connector.virtualAccounts![0]!;
    /**
     * A submission as the gateway makes it: to the pending account, with the name and session id
     * its name enquiry gave (the generic contract carries the session on).
     */
    const transferInput = (reference = randomUUID()): SubmitTransferInput => ({
      reference,
      amountMinor: TRANSFER_AMOUNT,
      bankCode: h.knownAccount.bankCode,
      accountNumber: h.pendingAccount,
      accountName: pendingRecipient.accountName,
      narration: 'conformance',
      ...(pendingRecipient.sessionId ? { sessionId: pendingRecipient.sessionId } : {}),
    });
    const allocation = (reference = `va-${randomUUID()}`) => ({
      reference,
      accountName: 'ADA STORES',
      customerId: `cus-${reference}`,
    });
    const takenUnder = async (reference: string) =>
      (await h.takenTransfers()).filter((transfer) => transfer.reference === reference);

    /** The callbacks received so far that verify, normalized. */
    function callbacks(): { request: ReceivedWebhook; callback: NormalizedCallback }[] {
      const receiverOf = h.connector.callbacks!;
      return receiver.on(h.callbackPath).flatMap((request) => {
        if (!receiverOf.verify(request.body, request.headers).ok) return [];
        const normalized = receiverOf.normalize(request.body);
        return normalized.ok ? [{ request, callback: normalized.callback }] : [];
      });
    }
    const callbacksAbout = (key: 'reference' | 'transaction_reference', value: string) =>
      callbacks().filter(({ callback }) => callback.data[key] === value);

    /** A transfer taken and ended by the provider as `outcome`, its callback received. */
    async function endedTransfer(outcome: 'successful' | 'failed') {
      const input = transferInput();
      await transfers().submitTransfer(input);
      await h.endTransfer(input.reference, outcome);
      const [received] = await eventually(
        () => {
          const found = callbacksAbout('reference', input.reference);
          return found.length > 0 && found;
        },
        10_000,
        20,
      );
      return { input, received: received! };
    }

    describe('banks and name enquiry', () => {
      it('lists the banks, each with a code and a name', async () => {
        const banks = await transfers().listBanks();
        expect(banks.length).toBeGreaterThan(0);
        for (const bank of banks) {
          expect(bank.code).toMatch(/^\d{3,6}$/);
          expect(bank.name.trim()).not.toBe('');
        }
        expect(banks).toContainEqual(expect.objectContaining({ code: '058', name: 'Guaranty Trust Bank' }));
        expect(new Set(banks.map((bank) => bank.code)).size).toBe(banks.length);
      });

      it("resolves a known account: the provider's name for it, and a session id", async () => {
        const { bankCode, accountNumber, accountName } = h.knownAccount;
        const resolved = await transfers().nameEnquiry(bankCode, accountNumber);
        expect(resolved).toEqual({ accountNumber, bankCode, accountName, sessionId: expect.any(String) });
        // Paystack's resolve gives no NIP session id (its harness says null): nothing to check there.
        if (h.nameEnquirySession) expect(resolved.sessionId).toMatch(h.nameEnquirySession);
        else expect(resolved.sessionId).toBe('');
      });

      it('an unknown account is invalid_account, not transient', async () => {
        const error = await providerError(transfers().nameEnquiry(h.knownAccount.bankCode, h.unknownAccount));
        expect(error).toMatchObject({ outcome: 'invalid_account', transient: false, notTaken: false });
      });
    });

    describe('transfers', () => {
      for (const outcome of ['successful', 'failed'] as const) {
        it(`is taken pending, and the status query follows the provider to ${outcome}`, async () => {
          const input = transferInput();
          const before = (await h.takenTransfers()).length;
          const submitted = await transfers().submitTransfer(input);
          expect(submitted.status).toBe('pending');
          expect(await transfers().transferStatus(input.reference)).toMatchObject({ status: 'pending' });
          await h.endTransfer(input.reference, outcome);
          expect(await transfers().transferStatus(input.reference)).toMatchObject({ status: outcome });
          expect(await takenUnder(input.reference)).toEqual([
            { reference: input.reference, amountMinor: TRANSFER_AMOUNT },
          ]);
          expect((await h.takenTransfers()).length).toBe(before + 1);
        });
      }

      it('a reference the provider never took is not_found, not transient', async () => {
        const error = await providerError(transfers().transferStatus(randomUUID()));
        expect(error).toMatchObject({ outcome: 'not_found', transient: false });
      });

      it('a submission refused without being taken is definitive and notTaken; the provider holds nothing', async () => {
        const before = (await h.takenTransfers()).length;
        const input = transferInput();
        // The refusing account may have no name enquiry of its own (the sandbox bank's 0000000000):
        // the submission carries the pending account's name and session, which no bank ties to it.
        const error = await providerError(
          h.refusingNotTaken((accountNumber) => transfers().submitTransfer({ ...input, accountNumber })),
        );
        expect(error).toMatchObject({ transient: false, notTaken: true });
        expect((await h.takenTransfers()).length).toBe(before);
        expect(await providerError(transfers().transferStatus(input.reference))).toMatchObject({
          outcome: 'not_found',
          transient: false,
        });
      });
    });

    describe('every error class on the wire', () => {
      /** Each operation: run it once (a fault planned on its route), then check what the provider kept. */
      const operations: {
        operation: Operation;
        /** Everything the operation needs, made before the fault is planned. */
        prepare: () => Promise<() => Promise<unknown>>;
        /** After the fault: the same call again, without one, answers for what the provider kept. */
        afterwards?: (reachedProvider: boolean) => Promise<void>;
      }[] = [];

      let submitted: SubmitTransferInput;
      let allocated: { reference: string; account?: AllocatedVirtualAccount };
      operations.push(
        { operation: 'listBanks', prepare: async () => () => transfers().listBanks() },
        {
          operation: 'nameEnquiry',
          prepare: async () => () => transfers().nameEnquiry(h.knownAccount.bankCode, h.knownAccount.accountNumber),
        },
        {
          operation: 'submission',
          prepare: async () => {
            submitted = transferInput();
            return () => transfers().submitTransfer(submitted);
          },
          afterwards: async (reached) => {
            const kept = reached ? [{ reference: submitted.reference, amountMinor: TRANSFER_AMOUNT }] : [];
            expect(await takenUnder(submitted.reference)).toEqual(kept);
            // The retry of the same submission answers for the one transfer: taken once, pending.
            expect(await transfers().submitTransfer(submitted)).toMatchObject({ status: 'pending' });
            expect(await takenUnder(submitted.reference)).toEqual([
              { reference: submitted.reference, amountMinor: TRANSFER_AMOUNT },
            ]);
          },
        },
        {
          operation: 'status',
          prepare: async () => {
            const input = transferInput();
            await transfers().submitTransfer(input);
            return () => transfers().transferStatus(input.reference);
          },
        },
        {
          operation: 'allocate',
          prepare: async () => {
            const input = allocation();
            allocated = { reference: input.reference };
            return () => route().provider.allocate(input);
          },
          afterwards: async () => {
            // Whatever the provider did with the first call, a repeat gives one account, and again the same.
            const account = await route().provider.allocate(allocation(allocated.reference));
            expect(account.accountNumber).toMatch(/^\d{10}$/);
            expect(await route().provider.allocate(allocation(allocated.reference))).toEqual(account);
          },
        },
        {
          operation: 'close',
          prepare: async () => {
            const account = await route().provider.allocate(allocation());
            allocated = { reference: '', account };
            return () => route().provider.close(account.accountNumber, 'conformance', account.providerReference);
          },
          afterwards: async () => {
            const account = allocated.account!;
            await route().provider.close(account.accountNumber, 'conformance', account.providerReference);
            expect(await h.accountOpen(account.accountNumber)).toBe(false);
          },
        },
        { operation: 'settlement', prepare: async () => () => h.connector.settlementReport!(today()) },
      );

      for (const { operation, prepare, afterwards } of operations) {
        describe(operation, () => {
          for (const errorClass of TRANSIENT_CLASSES) {
            const reason = options.notApplicable?.[`${operation}/${errorClass.fault}`];
            (reason ? it.skip : it)(
              `${errorClass.name} → transient ${errorClass.outcome}, never a status${reason ? ` (n/a: ${reason})` : ''}`,
              async () => {
                const run = await prepare();
                let error: ProviderError;
                if (errorClass.fault === 'refused') {
                  await h.proxy.down();
                  try {
                    error = await providerError(run());
                  } finally {
                    await h.proxy.up();
                  }
                } else {
                  h.proxy.failNext(errorClass.fault, h.routes[operation]);
                  error = await providerError(run());
                }
                expect(error).toMatchObject({ transient: true, outcome: errorClass.outcome, notTaken: false });
                await afterwards?.(errorClass.reachesProvider);
              },
              ERROR_CHECK_BOUND_MS,
            );
          }

          it(
            "the provider's own definitive 4xx (a wrong key) → not transient",
            async () => {
              const run = await prepare();
              h.proxy.failNext('wrong_key', h.routes[operation]);
              const error = await providerError(run());
              expect(error.transient).toBe(false);
              expect(error.httpStatus).toBe(401);
              // Refused, so nothing was done: the retry finds the provider as it was.
              await afterwards?.(false);
            },
            ERROR_CHECK_BOUND_MS,
          );
        });
      }
    });

    describe('the lost answer', () => {
      it("the provider took the submission and the answer was lost: the retry answers the transfer's real status, taken once", async () => {
        const input = transferInput();
        const before = (await h.takenTransfers()).length;
        h.proxy.failNext('lose_answer', h.routes.submission);
        expect(await providerError(transfers().submitTransfer(input))).toMatchObject({
          transient: true,
          notTaken: false,
        });
        const taken = [{ reference: input.reference, amountMinor: TRANSFER_AMOUNT }];
        expect(await takenUnder(input.reference)).toEqual(taken);

        expect(await transfers().submitTransfer(input)).toMatchObject({ status: 'pending' });
        await h.endTransfer(input.reference, 'successful');
        // Never a failure: a repeat after the end answers the end.
        expect(await transfers().submitTransfer(input)).toMatchObject({ status: 'successful' });
        expect(await takenUnder(input.reference)).toEqual(taken);
        expect((await h.takenTransfers()).length).toBe(before + 1);
      });

      it('a failed transfer whose answer was lost is failed on the retry, taken once', async () => {
        const input = transferInput();
        h.proxy.failNext('lose_answer', h.routes.submission);
        await providerError(transfers().submitTransfer(input));
        await h.endTransfer(input.reference, 'failed');
        expect(await transfers().submitTransfer(input)).toMatchObject({ status: 'failed' });
        expect(await takenUnder(input.reference)).toEqual([
          { reference: input.reference, amountMinor: TRANSFER_AMOUNT },
        ]);
      });
    });

    describe('callbacks', () => {
      for (const outcome of ['successful', 'failed'] as const) {
        it(`a ${outcome} transfer's callback verifies and reads as transfer.${outcome} with our reference`, async () => {
          const { input, received } = await endedTransfer(outcome);
          expect(received.callback.type).toBe(`transfer.${outcome}`);
          expect(received.callback.data.reference).toBe(input.reference);
          expect(received.callback.eventId).not.toBe('');
        });
      }

      it('a credit to a virtual account reads as virtual_account.credit, to the kobo, the fee and the account', async () => {
        const account = await route().provider.allocate(allocation());
        const { transactionReference, feeMinor = 0 } = await h.credit(route(), account.accountNumber, CREDIT_AMOUNT);
        const [received] = await eventually(
          () => {
            const found = callbacksAbout('transaction_reference', transactionReference);
            return found.length > 0 && found;
          },
          10_000,
          20,
        );
        expect(received!.callback.type).toBe('virtual_account.credit');
        expect(received!.callback.data).toMatchObject({
          account_number: account.accountNumber,
          amount_minor: CREDIT_AMOUNT,
          transaction_reference: transactionReference,
        });
        // A callback that names no fee is of a provider that keeps none.
        expect(received!.callback.data.fee_minor ?? 0).toBe(feeMinor);
        // Where the callback names the virtual-account provider, it is this route's.
        expect(received!.callback.data.provider ?? route().provider.name).toBe(route().provider.name);
      });

      it('a tampered body, a missing signature or a bad one does not verify', async () => {
        const { received } = await endedTransfer('successful');
        const { body, headers } = received.request;
        const receiverOf = h.connector.callbacks!;
        expect(receiverOf.verify(body, headers)).toEqual({ ok: true });

        const tampered = body.replace(String(received.callback.data.reference), randomUUID());
        expect(tampered).not.toBe(body);
        expect(receiverOf.verify(tampered, headers).ok).toBe(false);

        const signatureHeaders = Object.keys(headers).filter((name) => /signature/i.test(name));
        expect(signatureHeaders.length).toBeGreaterThan(0);
        const unsigned: IncomingHttpHeaders = Object.fromEntries(
          Object.entries(headers).filter(([name]) => !signatureHeaders.includes(name)),
        );
        expect(receiverOf.verify(body, unsigned).ok).toBe(false);

        const forged: IncomingHttpHeaders = { ...headers };
        for (const name of signatureHeaders) forged[name] = flipOneCharacter(String(headers[name]));
        expect(receiverOf.verify(body, forged).ok).toBe(false);
      });

      it('a callback the provider sends again (no 2xx the first time) has the same event id', async () => {
        const input = transferInput();
        await transfers().submitTransfer(input);
        refuseOnce.add(input.reference);
        await h.endTransfer(input.reference, 'successful');
        await eventually(() => !refuseOnce.has(input.reference), 10_000, 20);
        await h.redeliver?.();
        const deliveries = await eventually(
          () => {
            const found = callbacksAbout('reference', input.reference);
            return found.length >= 2 && found;
          },
          10_000,
          20,
        );
        expect(deliveries.map(({ callback }) => callback.eventId)).toEqual([
          deliveries[0]!.callback.eventId,
          deliveries[0]!.callback.eventId,
        ]);
        expect(deliveries[1]!.callback).toEqual(deliveries[0]!.callback);
      });
    });

    describe('virtual accounts', () => {
      it('allocates an account at the bank, the same one for a repeat of the reference, and closes it', async () => {
        const input = allocation();
        const account = await route().provider.allocate(input);
        expect(account).toMatchObject({
          accountNumber: expect.stringMatching(/^\d{10}$/),
          bankCode: h.virtualAccountBank.code,
          bankName: h.virtualAccountBank.name,
        });
        expect(await route().provider.allocate(input)).toEqual(account);
        expect(await h.accountOpen(account.accountNumber)).toBe(true);
        await route().provider.close(account.accountNumber, 'conformance', account.providerReference);
        expect(await h.accountOpen(account.accountNumber)).toBe(false);
      });

      it('another reference is another account', async () => {
        const first = await route().provider.allocate(allocation());
        const second = await route().provider.allocate(allocation());
        expect(second.accountNumber).not.toBe(first.accountNumber);
      });
    });

    describe('settlement report', () => {
      it("lists today's completed transfer and credit (what the provider settles of it), to the kobo", async () => {
        const { input } = await endedTransfer('successful');
        const account = await route().provider.allocate(allocation());
        const { transactionReference, feeMinor = 0 } = await h.credit(route(), account.accountNumber, CREDIT_AMOUNT);
        const report = await h.connector.settlementReport!(today());
        expect(report.date).toBe(today());
        expect(report.items.filter((item) => item.reference === input.reference)).toEqual([
          expect.objectContaining({
            kind: 'transfer',
            reference: input.reference,
            amountMinor: TRANSFER_AMOUNT,
            status: 'successful',
            provider: null,
            accountNumber: h.pendingAccount,
          }),
        ]);
        expect(report.items.filter((item) => item.reference === transactionReference)).toEqual([
          expect.objectContaining({
            kind: 'inbound_credit',
            reference: transactionReference,
            amountMinor: CREDIT_AMOUNT - feeMinor,
            status: 'successful',
            provider: route().provider.name,
            accountNumber: account.accountNumber,
          }),
        ]);
      });
    });
  });
}

/** The signature with one character changed, within its own alphabet: well-formed, and wrong. */
function flipOneCharacter(signature: string): string {
  const at = signature.length - 8;
  const char = signature[at]!;
  const replacement = /\d/.test(char) ? String((Number(char) + 1) % 10) : char === 'a' ? 'b' : 'a';
  return `${signature.slice(0, at)}${replacement}${signature.slice(at + 1)}`;
}
