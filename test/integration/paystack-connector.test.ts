// The paystack connector against the Paystack simulator, over real HTTP: every answer the
// consumers act on (transfers' activities, the callback dispatcher, virtual accounts, the daily
// reconciliation), and every fault that must stay a transient error rather than a guess.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { paystackConnector } from '../../src/connectors/paystack/index.ts';
import type { PaystackDedicatedAccounts } from '../../src/connectors/paystack/virtual-accounts.ts';
import type { Connector } from '../../src/connectors/types.ts';
import type { ProviderError, SubmitTransferInput } from '../../src/connectors/capabilities.ts';
import { providerError } from '../support/provider-error.ts';
import { type Fault, type PaystackSimulator, startPaystackSimulator } from '../simulators/paystack.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';

const TIMEOUT_MS = 300;

let sim: PaystackSimulator;
let receiver: Receiver;
let connector: Connector;

beforeAll(async () => {
  sim = await startPaystackSimulator();
  receiver = await startReceiver();
  sim.webhookUrl = `${receiver.url}/provider-callbacks/paystack`;
});

afterAll(async () => {
  await Promise.all([sim.close(), receiver.close()]);
});

beforeEach(() => {
  // A fresh connector per test: no recipient kept from another test.
  connector = paystackConnector.create(
    paystackConnector.settings.parse({ PAYSTACK_SECRET_KEY: sim.secretKey, PAYSTACK_BASE_URL: sim.url }),
    { timeoutMs: TIMEOUT_MS },
  );
  sim.requests.length = 0;
});

afterEach(() => {
  sim.requireOtp(false);
  sim.setBalance(1_000_000_000_00);
  sim.setTime(null);
  sim.setBankPageSize(100);
  sim.setListPageSize(100);
});

let counter = 0;
function transferId(): string {
  counter += 1;
  return `7a1c0e52-3b4d-4e6f-8a9b-${String(counter).padStart(12, '0')}`;
}

/** A transfer's status as the connector reads it when Paystack gave it no session: Paystack's own code and why. */
const withoutSession = (status: string, rawCode: string, message: string) => ({
  status,
  sessionId: '',
  rawCode,
  message,
});

/** A transfer the connector has submitted to the simulator: its input. */
async function submittedTransfer(): Promise<SubmitTransferInput> {
  const input = transferInput();
  await transfers().submitTransfer(input);
  return input;
}

function transferInput(overrides: Partial<SubmitTransferInput> = {}): SubmitTransferInput {
  return {
    reference: transferId(),
    amountMinor: 250_075,
    bankCode: '058',
    accountNumber: '0123456789',
    accountName: 'TEST ACCOUNT 6789',
    narration: 'Invoice 42',
    ...overrides,
  };
}

const transfers = () => connector.transfers!;
const accounts = () => connector.virtualAccounts![0]!.provider;

describe('banks and name enquiry', () => {
  it('lists the banks across the cursor pages, slug kept', async () => {
    sim.setBankPageSize(3);
    const banks = await transfers().listBanks();
    expect(banks).toHaveLength(7);
    expect(banks[0]).toEqual({ code: '044', name: 'Access Bank', slug: 'access-bank' });
    expect(banks[6]).toEqual({ code: '057', name: 'Zenith Bank', slug: 'zenith-bank' });
    expect(sim.requests.filter((request) => request.startsWith('GET /bank?'))).toHaveLength(3);
    expect(sim.requests[0]).toBe('GET /bank?country=nigeria');
  });

  it('resolves an account', async () => {
    expect(await transfers().nameEnquiry('058', '0123456789')).toEqual({
      accountNumber: '0123456789',
      bankCode: '058',
      accountName: 'TEST ACCOUNT 6789',
      sessionId: '',
    });
    expect(sim.requests).toEqual(['GET /bank/resolve?account_number=0123456789&bank_code=058']);
  });

  it('an account that does not resolve is invalid_account, not transient', async () => {
    const error = await providerError(transfers().nameEnquiry('058', '0000000000'));
    expect(error.outcome).toBe('invalid_account');
    expect(error.transient).toBe(false);
    expect(error.httpStatus).toBe(422);
    expect(error.message).toBe(
      'Paystack could not resolve the account: Could not resolve account name. Check parameters or try again.',
    );
  });

  it('a wrong key is refused definitively, and the key is in no message', async () => {
    const wrong = paystackConnector.create(
      { secretKey: 'sk_live_wrongwrongwrong', baseUrl: sim.url },
      { timeoutMs: TIMEOUT_MS },
    );
    const error = await providerError(wrong.transfers!.nameEnquiry('058', '0123456789'));
    expect(error.transient).toBe(false);
    expect(error.httpStatus).toBe(401);
    expect(error.message).toBe('Paystack refused the name enquiry: Invalid key');
    expect(JSON.stringify({ message: error.message, cause: String(error.cause) })).not.toContain('wrongwrong');
  });
});

describe('transfers', () => {
  it('submits as pending, then the status query follows Paystack to success', async () => {
    const input = transferInput();
    expect(await transfers().submitTransfer(input)).toEqual({ status: 'pending', sessionId: '', rawCode: 'pending' });
    const atPaystack = sim.transfers.get(input.reference)!;
    expect(atPaystack).toMatchObject({ amount: 250_075, reason: 'Invoice 42', currency: 'NGN', status: 'pending' });
    expect(atPaystack.recipient).toMatchObject({ account_number: '0123456789', bank_code: '058' });
    expect(await transfers().transferStatus(input.reference)).toEqual({
      status: 'pending',
      sessionId: '',
      rawCode: 'pending',
    });
    await sim.finishTransfer(input.reference, 'success');
    expect(await transfers().transferStatus(input.reference)).toEqual({
      status: 'successful',
      sessionId: `0900002${String(atPaystack.id).padStart(23, '0')}`,
      rawCode: 'success',
      message: 'Approved',
    });
  });

  it('keeps the recipient per account: a second transfer to it makes no new recipient', async () => {
    await transfers().submitTransfer(transferInput({ accountNumber: '0222222222' }));
    await transfers().submitTransfer(transferInput({ accountNumber: '0222222222' }));
    expect(sim.requests.filter((request) => request === 'POST /transferrecipient')).toHaveLength(1);
    expect(sim.requests.filter((request) => request === 'POST /transfer')).toHaveLength(2);
  });

  it('makes the recipient again when Paystack no longer knows the one kept', async () => {
    const first = transferInput({ accountNumber: '0333333333' });
    await transfers().submitTransfer(first);
    sim.recipients.delete('058:0333333333');
    const second = transferInput({ accountNumber: '0333333333' });
    expect((await transfers().submitTransfer(second)).status).toBe('pending');
    expect(sim.requests.filter((request) => request === 'POST /transferrecipient')).toHaveLength(2);
    expect(sim.transfers.get(second.reference)?.recipient.account_number).toBe('0333333333');
  });

  it('a failed transfer is failed', async () => {
    const input = await submittedTransfer();
    await sim.finishTransfer(input.reference, 'failed');
    expect(await transfers().transferStatus(input.reference)).toEqual(
      withoutSession('failed', 'failed', 'Failed at the processor'),
    );
  });

  it('a transfer reversed after its success reads as reversed (decisions §21)', async () => {
    const input = await submittedTransfer();
    await sim.finishTransfer(input.reference, 'success');
    expect((await transfers().transferStatus(input.reference)).status).toBe('successful');
    await sim.finishTransfer(input.reference, 'reversed');
    expect(await transfers().transferStatus(input.reference)).toMatchObject({
      status: 'reversed',
      rawCode: 'reversed',
      message: 'Reversed by the beneficiary bank',
    });
  });

  it('a status it does not know is kept pending for the operator, never guessed', async () => {
    const input = await submittedTransfer();
    sim.transfers.get(input.reference)!.status = 'abandoned';
    expect(await transfers().transferStatus(input.reference)).toEqual(
      withoutSession('pending', 'abandoned', 'Paystack status abandoned: kept for the operator'),
    );
  });

  it('a transfer Paystack never saw is not_found', async () => {
    const error = await providerError(transfers().transferStatus(transferId()));
    expect(error.outcome).toBe('not_found');
    expect(error.transient).toBe(false);
    expect(error.httpStatus).toBe(404);
  });

  it('a transfer held for an OTP is refused definitively, telling the operator to disable transfer OTP', async () => {
    sim.requireOtp(true);
    const input = transferInput();
    const error = await providerError(transfers().submitTransfer(input));
    expect(error.transient).toBe(false);
    expect(error.notTaken).toBe(false);
    // Held at Paystack, never to be paid out: the transfer fails there and goes nowhere else (decisions §13).
    expect(error.heldUnpaid).toBe(true);
    expect(error.rawCode).toBe('otp');
    expect(error.message).toContain('disable transfer OTP for the integration');
    expect(sim.transfers.get(input.reference)?.status).toBe('otp');
  });

  it('an answer lost after Paystack took the transfer: the retry meets the duplicate reference and asks the status', async () => {
    const input = transferInput();
    sim.failNext('lose_answer', 'POST /transfer');
    const lost = await providerError(transfers().submitTransfer(input));
    expect(lost.transient).toBe(true);
    expect(lost.ambiguous).toBe(true);
    expect(lost.outcome).toBe('network_error');
    expect(sim.transfers.get(input.reference)?.status).toBe('pending');

    expect(await transfers().submitTransfer(input)).toEqual({ status: 'pending', sessionId: '', rawCode: 'pending' });
    expect(sim.requests.slice(-2)).toEqual(['POST /transfer', `GET /transfer/verify/${input.reference}`]);

    await sim.finishTransfer(input.reference, 'success');
    expect((await transfers().submitTransfer(input)).status).toBe('successful');
    expect([...sim.transfers.values()].filter((transfer) => transfer.reference === input.reference)).toHaveLength(1);
  });

  it('insufficient balance at Paystack is a definitive refusal that did not take the transfer', async () => {
    sim.setBalance(100_000);
    const input = transferInput();
    const error = await providerError(transfers().submitTransfer(input));
    expect(error.transient).toBe(false);
    expect(error.notTaken).toBe(true);
    expect(error.outcome).toBe('transfer_failed');
    expect(error.httpStatus).toBe(400);
    expect(error.rawCode).toBe('insufficient_balance');
    expect(error.message).toBe('Paystack refused: Your balance is not enough to fulfil this request');
    expect(sim.transfers.has(input.reference)).toBe(false);
  });

  it('a validation_error in words Paystack does not document as a refusal before processing proves nothing', async () => {
    const input = transferInput();
    sim.failNext('duplicate_unrecognised', 'POST /transfer');
    const error = await providerError(transfers().submitTransfer(input));
    expect(error).toMatchObject({ transient: false, notTaken: false, ambiguous: false, httpStatus: 400 });
    expect(error.message).toBe('Paystack refused: Transfer reference has been used before');
  });

  it('a wrong key (401) is a refusal before processing', async () => {
    const input = transferInput();
    sim.failNext('unauthorized', 'POST /transfer');
    const error = await providerError(transfers().submitTransfer(input));
    expect(error).toMatchObject({ transient: false, notTaken: true, httpStatus: 401 });
    expect(sim.transfers.has(input.reference)).toBe(false);
  });

  it('a 429 says Paystack did not act: transient and not ambiguous; a 5xx may follow work done: ambiguous', async () => {
    sim.failNext('too_many_requests', 'POST /transfer');
    expect(await providerError(transfers().submitTransfer(transferInput()))).toMatchObject({
      transient: true,
      ambiguous: false,
      httpStatus: 429,
    });
    sim.failNext('html_502', 'POST /transfer');
    expect(await providerError(transfers().submitTransfer(transferInput()))).toMatchObject({
      transient: true,
      ambiguous: true,
      httpStatus: 502,
    });
  });

  it('a recipient Paystack cannot make is a refusal that took nothing', async () => {
    const error = await providerError(transfers().submitTransfer(transferInput({ accountNumber: '0000000000' })));
    expect(error).toMatchObject({ outcome: 'invalid_account', transient: false, notTaken: true, httpStatus: 422 });
  });

  it('sends the reference Paystack accepts for an id that breaks its rules, the same on every retry', async () => {
    const input = transferInput({ reference: 'Our.Reference.2025' });
    await transfers().submitTransfer(input);
    const [reference] = [...sim.transfers.keys()].filter((key) => key.startsWith('gwd_'));
    expect(reference).toMatch(/^gwd_[0-9a-f]{40}$/);
    expect(await transfers().submitTransfer(input)).toMatchObject({ status: 'pending' });
    expect(await transfers().transferStatus(input.reference)).toMatchObject({ status: 'pending' });
    expect([...sim.transfers.keys()].filter((key) => key.startsWith('gwd_'))).toEqual([reference]);
  });

  describe('garbage, hangs and resets are transient, never a guess', () => {
    const cases: [Fault, ProviderError['outcome']][] = [
      ['html_502', 'unavailable'],
      ['not_json', 'unknown'],
      ['missing_fields', 'unknown'],
      ['no_data', 'unknown'],
      ['hang', 'timeout'],
      ['reset', 'network_error'],
    ];

    it.each(cases)('POST /transfer answered with %s → transient %s', async (fault, outcome) => {
      const input = transferInput();
      sim.failNext(fault, 'POST /transfer');
      const error = await providerError(transfers().submitTransfer(input));
      expect(error.transient).toBe(true);
      expect(error.notTaken).toBe(false);
      expect(error.outcome).toBe(outcome);
      expect(error.message).not.toContain(sim.secretKey);
    });

    it.each(cases)('GET /transfer/verify answered with %s → transient %s', async (fault, outcome) => {
      const input = await submittedTransfer();
      sim.failNext(fault, `GET /transfer/verify/${input.reference}`);
      const error = await providerError(transfers().transferStatus(input.reference));
      expect(error).toMatchObject({ transient: true, outcome });
    });

    it.each(cases)('GET /bank/resolve answered with %s → transient %s', async (fault, outcome) => {
      sim.failNext(fault, 'GET /bank/resolve');
      const error = await providerError(transfers().nameEnquiry('058', '0123456789'));
      expect(error).toMatchObject({ transient: true, outcome });
    });

    it('POST /transferrecipient hanging → transient timeout, nothing sent after it', async () => {
      sim.failNext('hang', 'POST /transferrecipient');
      const error = await providerError(transfers().submitTransfer(transferInput({ accountNumber: '0444444444' })));
      expect(error).toMatchObject({ transient: true, outcome: 'timeout', notTaken: false });
      expect(sim.requests).toEqual(['POST /transferrecipient']);
    });
  });
});

describe('callbacks', () => {
  /** The last webhook the receiver got, checked to be `sent` to the byte and to verify; its body. */
  function lastDeliveryVerified(sent: string): string {
    const delivered = receiver.on('/provider-callbacks/paystack');
    const { body, headers } = delivered[delivered.length - 1]!;
    expect(body).toBe(sent);
    expect(connector.callbacks!.verify(body, headers)).toEqual({ ok: true });
    return body;
  }

  /** The connector reads the webhook body, and reads it as exactly this callback. */
  function expectReadAs(body: string, callback: Record<string, unknown>) {
    expect(connector.callbacks!.normalize(body)).toEqual({ ok: true, callback });
  }

  it('a transfer.success signed by Paystack verifies and reads as transfer.successful', async () => {
    const input = await submittedTransfer();
    const sent = await sim.finishTransfer(input.reference, 'success');
    expect(sent.answered).toBe(200);
    const body = lastDeliveryVerified(sent.body);
    const transfer = sim.transfers.get(input.reference)!;
    expectReadAs(body, {
      eventId: `transfer.success:${input.reference}`,
      type: 'transfer.successful',
      occurredAt: transfer.updatedAt,
      data: {
        reference: input.reference,
        session_id: transfer.session.id,
        response_code: 'success',
        message: 'Approved',
      },
    });
  });

  it('a repeat has the same event id; a reversal after the success has another', async () => {
    const input = await submittedTransfer();
    const success = await sim.finishTransfer(input.reference, 'success');
    const repeat = await sim.resend(success);
    const first = connector.callbacks!.normalize(success.body);
    const again = connector.callbacks!.normalize(repeat.body);
    expect(first.ok && again.ok && again.callback.eventId).toBe(first.ok && first.callback.eventId);

    const reversed = await sim.finishTransfer(input.reference, 'reversed');
    const body = lastDeliveryVerified(reversed.body);
    const reversal = connector.callbacks!.normalize(body);
    expect(reversal).toEqual({
      ok: true,
      callback: {
        eventId: `transfer.reversed:${input.reference}`,
        type: 'transfer.reversed',
        occurredAt: sim.transfers.get(input.reference)!.updatedAt,
        data: {
          reference: input.reference,
          session_id: sim.transfers.get(input.reference)!.session.id,
          response_code: 'reversed',
          message: 'Reversed by the beneficiary bank',
        },
      },
    });
    expect(reversal.ok && reversal.callback.eventId).not.toBe(first.ok && first.callback.eventId);
  });

  it('a transfer.failed reads as transfer.failed with Paystack status', async () => {
    const input = await submittedTransfer();
    const sent = await sim.finishTransfer(input.reference, 'failed');
    expectReadAs(sent.body, {
      eventId: `transfer.failed:${input.reference}`,
      type: 'transfer.failed',
      occurredAt: sim.transfers.get(input.reference)!.updatedAt,
      data: { reference: input.reference, response_code: 'failed', message: 'Failed at the processor' },
    });
  });

  it('refuses a bad, missing or malformed signature', async () => {
    const input = await submittedTransfer();
    const sent = await sim.finishTransfer(input.reference, 'success');
    const callbacks = connector.callbacks!;
    const tampered = sent.body.replace('"success"', '"failed"');
    expect(callbacks.verify(tampered, { 'x-paystack-signature': sent.signature })).toEqual({
      ok: false,
      reason: 'signature does not match',
    });
    expect(callbacks.verify(sent.body, {})).toEqual({ ok: false, reason: 'missing x-paystack-signature header' });
    expect(callbacks.verify(sent.body, { 'x-paystack-signature': 'abc' })).toEqual({
      ok: false,
      reason: 'malformed x-paystack-signature header',
    });
    expect(callbacks.verify(sent.body, { 'x-paystack-signature': [sent.signature, sent.signature] })).toEqual({
      ok: false,
      reason: 'malformed x-paystack-signature header',
    });
    const otherKey = paystackConnector.create(
      { secretKey: 'sk_live_another0000000000', baseUrl: sim.url },
      { timeoutMs: TIMEOUT_MS },
    );
    expect(otherKey.callbacks!.verify(sent.body, { 'x-paystack-signature': sent.signature })).toEqual({
      ok: false,
      reason: 'signature does not match',
    });
  });

  it('a charge.success on a dedicated account reads as a credit with its fee, to the kobo', async () => {
    const account = await accounts().allocate({
      reference: 'c0ffee00-0000-4000-8000-000000000001',
      accountName: 'Ada Obi',
      customerId: 'cus_1',
    });
    const { charge, webhook } = await sim.creditDedicatedAccount(account.accountNumber, 1_234_567, {
      name: 'EMEKA ADEWALE',
      account_number: 'XXXXXX4821',
      bank: 'Zenith Bank',
    });
    const body = lastDeliveryVerified(webhook.body);
    expectReadAs(body, {
      eventId: `charge.success:${charge.reference}`,
      type: 'virtual_account.credit',
      occurredAt: charge.paid_at,
      data: {
        provider: 'paystack',
        account_number: account.accountNumber,
        amount_minor: 1_234_567,
        // Paystack's fees: 1% of ₦12,345.67.
        fee_minor: 12_346,
        transaction_reference: charge.reference,
        sender_name: 'EMEKA ADEWALE',
        sender_account_number: 'XXXXXX4821',
        sender_bank: 'Zenith Bank',
      },
    });
    const repeat = await sim.resend(webhook);
    const again = connector.callbacks!.normalize(repeat.body);
    expect(again.ok && again.callback.eventId).toBe(`charge.success:${charge.reference}`);
  });

  it("a dedicated-account credit without Paystack's fee, or with a fee of all of it, is not read", () => {
    const credit = (fees: unknown) =>
      JSON.stringify({
        event: 'charge.success',
        data: {
          channel: 'dedicated_nuban',
          reference: 'dva_fee',
          status: 'success',
          amount: 10_000,
          ...(fees === undefined ? {} : { fees }),
          metadata: { receiver_account_number: '9000000001' },
        },
      });
    expect(connector.callbacks!.normalize(credit(undefined))).toEqual({
      ok: false,
      issues: [{ path: 'data.fees', message: "Paystack's fee is missing" }],
    });
    expect(connector.callbacks!.normalize(credit(null))).toEqual({
      ok: false,
      issues: [{ path: 'data.fees', message: "Paystack's fee is missing" }],
    });
    for (const fees of [10_000, 10_001]) {
      expect(connector.callbacks!.normalize(credit(fees))).toEqual({
        ok: false,
        issues: [{ path: 'data.fees', message: 'the fee is not less than the amount' }],
      });
    }
    for (const fees of [-1, 1.5, '100']) expect(connector.callbacks!.normalize(credit(fees)).ok).toBe(false);
    expect(connector.callbacks!.normalize(credit(9_999))).toMatchObject({
      ok: true,
      callback: { data: { amount_minor: 10_000, fee_minor: 9_999 } },
    });
  });

  it('any other event is recorded under its own name', () => {
    const body = JSON.stringify({
      event: 'charge.success',
      data: { id: 99, reference: 'card_ref_0001', channel: 'card' },
    });
    expectReadAs(body, {
      eventId: 'charge.success:card_ref_0001',
      type: 'charge.success',
      data: { id: 99, reference: 'card_ref_0001', channel: 'card' },
    });
    const other = JSON.stringify({ event: 'dedicatedaccount.assign.success', data: { id: 4321 } });
    expect(connector.callbacks!.normalize(other)).toMatchObject({
      ok: true,
      callback: { eventId: 'dedicatedaccount.assign.success:4321', type: 'dedicatedaccount.assign.success' },
    });
  });

  it.each([
    ['not JSON', 'not json'],
    ['an array', '[]'],
    ['null', 'null'],
    ['no event', '{"data":{}}'],
    ['a numeric event', '{"event":1,"data":{}}'],
    ['data not an object', '{"event":"transfer.success","data":"x"}'],
    ['a transfer without reference', '{"event":"transfer.success","data":{"status":"success"}}'],
    [
      'a credit with a string amount',
      '{"event":"charge.success","data":{"channel":"dedicated_nuban","reference":"r","status":"success","amount":"100"}}',
    ],
    [
      'a credit with no receiving account',
      '{"event":"charge.success","data":{"channel":"dedicated_nuban","reference":"r","status":"success","amount":100}}',
    ],
    [
      'a credit with a fractional amount',
      '{"event":"charge.success","data":{"channel":"dedicated_nuban","reference":"r","status":"success","amount":1.5,"metadata":{"receiver_account_number":"9000000001"}}}',
    ],
    ['a deeply nested body', `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`],
  ])('a hostile body (%s) is not ok, and nothing throws', (_, body) => {
    const result = connector.callbacks!.normalize(body);
    expect(result.ok).toBe(false);
  });
});

describe('dedicated virtual accounts', () => {
  it('allocates through a customer, idempotent on our reference, and closes', async () => {
    const input = {
      reference: 'aa11bb22-0000-4000-8000-000000000001',
      accountName: 'Chinedu Okafor',
      customerId: 'cus_42',
      preferredBank: 'wema-bank',
    };
    const account = await accounts().allocate(input);
    const atPaystack = sim.accounts.find((candidate) => candidate.account_number === account.accountNumber)!;
    expect(account).toEqual({
      accountNumber: atPaystack.account_number,
      bankCode: '035',
      bankName: 'Wema Bank',
      providerReference: String(atPaystack.id),
    });
    expect(atPaystack.customer).toMatchObject({
      email: 'va-aa11bb22-0000-4000-8000-000000000001@paystack-dva.gateway.invalid',
      first_name: 'Chinedu',
      last_name: 'Okafor',
      metadata: { gateway_reference: input.reference, gateway_customer_id: 'cus_42' },
    });

    expect(await accounts().allocate(input)).toEqual(account);
    expect(sim.accounts.filter((candidate) => candidate.customer === atPaystack.customer)).toHaveLength(1);

    await accounts().close(account.accountNumber);
    expect(atPaystack.active).toBe(false);
    // Closed already: closing again is harmless.
    await accounts().close(account.accountNumber);
    expect(sim.requests.filter((request) => request.startsWith('DELETE '))).toEqual([
      `DELETE /dedicated_account/${atPaystack.id}`,
    ]);
  });

  it('closes by the provider reference without searching', async () => {
    const account = await accounts().allocate({
      reference: 'aa11bb22-0000-4000-8000-000000000002',
      accountName: 'Bisi',
      customerId: 'cus_43',
    });
    sim.requests.length = 0;
    const paystackAccounts = accounts() as PaystackDedicatedAccounts;
    await paystackAccounts.close(account.accountNumber, 'customer left', account.providerReference);
    expect(sim.requests).toEqual([`DELETE /dedicated_account/${account.providerReference}`]);
  });

  it('finds the account to close across pages of the list', async () => {
    sim.setListPageSize(1);
    const account = await accounts().allocate({
      reference: 'aa11bb22-0000-4000-8000-000000000003',
      accountName: 'Tunde Bakare',
      customerId: 'cus_44',
    });
    await accounts().close(account.accountNumber);
    expect(sim.accounts.find((candidate) => candidate.account_number === account.accountNumber)?.active).toBe(false);
  });

  it('closing an account Paystack does not have is not_found', async () => {
    const error = await providerError(accounts().close('9999999999'));
    expect(error).toMatchObject({ outcome: 'not_found', transient: false });
  });

  it('a refused allocation with no account to show is rejected, not transient', async () => {
    const error = await providerError(
      accounts().allocate({
        reference: 'aa11bb22-0000-4000-8000-000000000004',
        accountName: 'Kemi',
        customerId: 'cus_45',
        preferredBank: 'access-bank',
      }),
    );
    expect(error).toMatchObject({ outcome: 'rejected', transient: false, httpStatus: 400 });
  });
});

describe('settlement report', () => {
  it("lists the day's ended transfers and dedicated-account credits (net of Paystack's fee), every page, to the kobo", async () => {
    const day = '2031-05-17';
    sim.setTime(new Date(`${day}T08:00:00.000Z`));
    sim.setListPageSize(2);
    const account = await accounts().allocate({
      reference: 'bb22cc33-0000-4000-8000-000000000001',
      accountName: 'Ngozi Eze',
      customerId: 'cus_9',
    });
    const settled = transferInput({ amountMinor: 100_001, accountNumber: '0555555551' });
    const failed = transferInput({ amountMinor: 200_002, accountNumber: '0555555552' });
    const reversed = transferInput({ amountMinor: 300_003, accountNumber: '0555555553' });
    const pending = transferInput({ amountMinor: 400_004, accountNumber: '0555555554' });
    for (const input of [settled, failed, reversed, pending]) await transfers().submitTransfer(input);
    sim.setTime(new Date(`${day}T09:30:00.000Z`));
    await sim.finishTransfer(settled.reference, 'success');
    await sim.finishTransfer(failed.reference, 'failed');
    await sim.finishTransfer(reversed.reference, 'success');
    sim.setTime(new Date(`${day}T11:15:00.000Z`));
    await sim.finishTransfer(reversed.reference, 'reversed');
    const { charge } = await sim.creditDedicatedAccount(account.accountNumber, 5_000_050);
    // The next day's: not on this day's report.
    sim.setTime(new Date('2031-05-18T00:00:00.001Z'));
    const tomorrow = transferInput({ amountMinor: 999, accountNumber: '0555555555' });
    await transfers().submitTransfer(tomorrow);
    await sim.finishTransfer(tomorrow.reference, 'success');
    await sim.creditDedicatedAccount(account.accountNumber, 777);

    const report = await connector.settlementReport!(day);
    const session = (reference: string) => sim.transfers.get(reference)!.session.id!;
    expect(report.date).toBe(day);
    expect(
      [...report.items].sort((a, b) => `${a.kind}${a.reference}`.localeCompare(`${b.kind}${b.reference}`)),
    ).toEqual(
      [
        {
          kind: 'inbound_credit',
          reference: charge.reference,
          sessionId: '',
          // What Paystack settles: 5,000,050 less its fee, 1% capped at ₦300.
          amountMinor: 4_970_050,
          status: 'successful',
          provider: 'paystack',
          accountNumber: account.accountNumber,
          valueTime: `${day}T11:15:00.000Z`,
        },
        {
          kind: 'transfer',
          reference: settled.reference,
          sessionId: session(settled.reference),
          amountMinor: 100_001,
          status: 'successful',
          provider: null,
          accountNumber: '0555555551',
          valueTime: `${day}T09:30:00.000Z`,
        },
        {
          kind: 'transfer',
          reference: failed.reference,
          sessionId: '',
          amountMinor: 200_002,
          status: 'failed',
          provider: null,
          accountNumber: '0555555552',
          valueTime: `${day}T09:30:00.000Z`,
        },
        {
          kind: 'transfer',
          reference: reversed.reference,
          sessionId: session(reversed.reference),
          amountMinor: 300_003,
          status: 'failed',
          provider: null,
          accountNumber: '0555555553',
          valueTime: `${day}T11:15:00.000Z`,
        },
      ].sort((a, b) => `${a.kind}${a.reference}`.localeCompare(`${b.kind}${b.reference}`)),
    );
    // Two per page: every page was read.
    expect(sim.requests.filter((request) => request.startsWith('GET /transfer?')).length).toBeGreaterThan(1);
    await expect(connector.transfers!.settlementReport(day)).resolves.toMatchObject({ date: day });
  });

  it('a garbled page is a transient error, not a short report', async () => {
    sim.failNext('missing_fields', 'GET /transaction');
    const error = await providerError(connector.settlementReport!('2031-05-17'));
    expect(error).toMatchObject({ transient: true, outcome: 'unknown' });
  });
});
