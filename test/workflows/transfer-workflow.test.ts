// transferWorkflow alone, phase by phase, under Temporal's time-skipping test server: its
// activities are stubs that record every call (no database, no bank), so each test states what the
// workflow asked of them, with which arguments, in which order. The whole stack's behaviour is
// tested in test/integration/transfers.test.ts and transfer-24h.test.ts.
import { acceptWith } from '../../activities/transfers/transfers.ts';
import { Context } from '@temporalio/activity';
import { WithStartWorkflowOperation, WorkflowUpdateStage } from '@temporalio/client';
import { ApplicationFailure } from '@temporalio/common';
import { describe, expect, it } from 'vitest';
import type { TransferActivities } from '../../activities/transfers/transfers.ts';
import {
  type BankOutcome,
  type OperatorResolution,
  type SubmissionAnswer,
  TRANSFER_WORKFLOW_TYPE,
  type TransferRecord,
  type TransferRequest,
  type TransferWorkflowInput,
  bankConfirmedSignal,
  createUpdate,
  resolveUpdate,
  statusQuery,
  transferWorkflowId,
} from '../../workflows/transfers/definitions.ts';
import {
  NOT_FOUND_CONFIRM_MS,
  NOT_FOUND_GRACE_MS,
  STUCK_AFTER_MS,
  type transferWorkflow,
} from '../../workflows/transfers/transfer.ts';
import { gate, recordingStubs, useStubWorkflowEnv } from '../support/stub-activities.ts';

const stub = useStubWorkflowEnv('transfer-workflow');

const HOUR = 60 * 60 * 1000;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

let references = 0;
/** A transfer of ₦12,345.67 (fee ₦25) to 0123456789 at bank 058, under a reference of its own. */
function transferRequest(): TransferRequest {
  references += 1;
  return {
    tenantId: 'tenant-a',
    reference: `invoice-${references}`,
    requestHash: 'hash-of-the-body',
    amountMinor: 1_234_567,
    feeMinor: 2_500,
    currency: 'NGN',
    recipientAccount: '0123456789',
    recipientBankCode: '058',
    recipientBankName: 'Guaranty Trust Bank',
    narration: 'Invoice 42',
    metadata: { invoice: 'INV-42' },
    mode: 'test',
  };
}

const ENQUIRY = { accountName: 'ADA OBI', sessionId: 'enquiry-session', connector: 'sandbox' };
const BANK_SESSION = 'bank-session';
/** The bank's status query finds the transfer paid out. */
const PAID: BankOutcome = { status: 'successful', sessionId: BANK_SESSION, providerCode: '00', source: 'status_query' };

/** Stubs that reserve, hand the transfer to a bank that says "pending", and record money moves. */
const DEFAULT_STUBS: TransferActivities = {
  // Made of the two below by transferStubs, as the real activity is.
  acceptTransfer: async () => {
    throw new Error('transferStubs composes acceptTransfer');
  },
  nameEnquiry: async () => ({ ...ENQUIRY }),
  reserveFunds: async (input) => ({
    id: input.transferId,
    status: 'pending',
    recipientName: input.recipientName,
    connector: input.connector,
  }),
  submitToBank: async () => ({ status: 'pending', sessionId: BANK_SESSION, providerCode: '09' }),
  assignConnector: async () => true,
  itemBankWord: async () => undefined,
  markProcessing: async () => undefined,
  clearPossiblyTaken: async () => undefined,
  recordConnectorConflict: async () => undefined,
  queryBankStatus: async () => ({ status: 'pending' }),
  settleTransfer: async (input) => ({
    id: input.transferId,
    status: 'completed',
    recipientName: 'ADA OBI',
    connector: 'sandbox',
  }),
  reverseTransfer: async (input) => ({
    id: input.transferId,
    status: 'failed',
    recipientName: 'ADA OBI',
    connector: 'sandbox',
  }),
  decideApproval: async (input) => ({
    id: input.transferId,
    status: input.outcome === 'approved' ? 'pending' : 'failed',
    recipientName: 'ADA OBI',
    connector: 'sandbox',
    approval: input.outcome,
  }),
  settleReservation: async () => null,
  flagStuck: async () => undefined,
  recordDiscrepancy: async () => true,
};

/**
 * The stubs as the real activities behave where the workflow relies on it: a submission asked to
 * (`markProcessing`, the lean shape) marks the transfer processing with its answer, recorded as the
 * markProcessing call it makes; and the books finish a transfer once, so a second settle or reverse
 * answers the first one's status (what a lean run adopts when a lost task's local activity ran).
 */
function transferStubs(overrides: Partial<TransferActivities> = {}) {
  const merged: TransferActivities = { ...DEFAULT_STUBS, ...overrides };
  const finished = new Map<string, TransferRecord['status']>();
  const once =
    <I extends { transferId: string }>(finish: (input: I) => Promise<TransferRecord>) =>
    async (input: I): Promise<TransferRecord> => {
      const earlier = finished.get(input.transferId);
      const record = await finish(input);
      if (earlier) return { ...record, status: earlier };
      finished.set(input.transferId, record.status);
      return record;
    };
  const recorded = recordingStubs<TransferActivities>({
    ...merged,
    submitToBank: async (input) => {
      const answer = await merged.submitToBank(input);
      if (input.markProcessing) {
        const held = answer.status === 'possibly_taken';
        await recorded.activities.markProcessing({
          transferId: input.transferId,
          sessionId: held ? '' : answer.sessionId,
          taken: !held,
        });
      }
      return answer;
    },
    settleTransfer: once((input) => merged.settleTransfer(input)),
    reverseTransfer: once((input) => merged.reverseTransfer(input)),
  });
  // The create path in one local activity, as the real one: its two steps, recorded as they are made.
  recorded.activities.acceptTransfer = (input) => acceptWith(recorded.activities, input);
  return recorded;
}

/** The default stubs, but `name` answers only once the test opens `held`: the test acts meanwhile. */
function transferStubsHolding(name: keyof TransferActivities) {
  const held = gate();
  const answer: (input: unknown) => Promise<unknown> = (input) =>
    (DEFAULT_STUBS[name] as (input: unknown) => Promise<unknown>)(input);
  const stubs = transferStubs({
    [name]: async (input: unknown) => {
      await held.opened;
      return answer(input);
    },
  });
  return { stubs, held };
}

/** Answers in turn, the last one again and again. */
function answers<T>(...list: T[]): () => Promise<T> {
  let next = 0;
  return async () => list[Math.min(next++, list.length - 1)]!;
}

/** Each call runs the next answer, the last one again and again. */
function answersEach<T>(...list: (() => Promise<T>)[]): () => Promise<T> {
  let next = 0;
  return () => list[Math.min(next++, list.length - 1)]!();
}

/** A refusal as the activities raise it: non-retryable, with a stable type. */
function refusal(type: string, message: string, details?: unknown): ApplicationFailure {
  return ApplicationFailure.create({ type, message, nonRetryable: true, ...(details ? { details: [details] } : {}) });
}

/** Starts the transfer's workflow with its `create` update, as the API does. */
async function create(taskQueue: string, request: TransferRequest) {
  const workflowId = transferWorkflowId(request.tenantId, request.reference);
  const created = stub.env.client.workflow.executeUpdateWithStart(createUpdate, {
    args: [request],
    startWorkflowOperation: new WithStartWorkflowOperation<typeof transferWorkflow>(TRANSFER_WORKFLOW_TYPE, {
      workflowId,
      taskQueue,
      args: [{ request } satisfies TransferWorkflowInput],
      workflowIdConflictPolicy: 'USE_EXISTING',
    }),
  });
  return { created, handle: stub.env.client.workflow.getHandle<typeof transferWorkflow>(workflowId) };
}

/** Starts the transfer's workflow without its `create` update, as an operator or a lost update leaves it. */
async function started(taskQueue: string, input: TransferWorkflowInput) {
  return stub.env.client.workflow.start<typeof transferWorkflow>(TRANSFER_WORKFLOW_TYPE, {
    workflowId: transferWorkflowId(input.request.tenantId, input.request.reference),
    taskQueue,
    args: [input],
  });
}

/** A transfer created through its workflow's `create` update: its request, handle and id. */
async function accepted(taskQueue: string) {
  const request = transferRequest();
  const { created, handle } = await create(taskQueue, request);
  const { transferId } = await created;
  return { request, handle, transferId };
}

/**
 * A transfer whose operator resolution (`failed`) is being applied: its reversal has been called and
 * answers only when the test opens the stubs' hold (transferStubsHolding('reverseTransfer')).
 */
async function reversingOnResolution(taskQueue: string, stubs: ReturnType<typeof transferStubs>) {
  const { handle, transferId } = await accepted(taskQueue);
  const resolution = operator('failed');
  const resolving = await handle.startUpdate(resolveUpdate, {
    args: [resolution],
    waitForStage: WorkflowUpdateStage.ACCEPTED,
  });
  await stubs.calledWith('reverseTransfer');
  return { handle, transferId, resolution, resolving };
}

/** What settleReservation finds when an earlier execution's reservation committed, with `connector`. */
const committedReservation = (transferId: string, connector: string) => ({
  id: transferId,
  status: 'pending' as const,
  recipientName: 'ADA OBI',
  connector,
});

/** What reserveFunds is asked for the request: the transfer, its recipient and the connector that answered. */
const reservation = (transferId: string, request: TransferRequest) => ({
  transferId,
  request,
  recipientName: 'ADA OBI',
  nameEnquirySessionId: 'enquiry-session',
  connector: 'sandbox',
});
const enquiry = { bankCode: '058', accountNumber: '0123456789', mode: 'test' };
/** A first submission (the transfer still pending), which marks it processing with its answer. */
const submission = (transferId: string, request: TransferRequest) => ({
  transferId,
  request,
  recipientName: 'ADA OBI',
  connector: 'sandbox',
  sessionId: 'enquiry-session',
  markProcessing: true,
});
/** A submission once the transfer is processing: the workflow's task marks it, not the activity. */
const resubmission = (transferId: string, request: TransferRequest) => {
  const { markProcessing: _folded, ...rest } = submission(transferId, request);
  return rest;
};
const bankSays = (status: 'successful' | 'failed', extra: Partial<BankOutcome> = {}): BankOutcome => ({
  status,
  sessionId: BANK_SESSION,
  providerCode: status === 'successful' ? '00' : '51',
  source: 'callback',
  ...extra,
});
const operator = (outcome: 'successful' | 'failed'): OperatorResolution => ({
  outcome,
  note: 'confirmed with the bank by phone',
  operator: 'ops@example.com',
});

describe('accept: the create update', () => {
  it('answers the transfer id once its money is reserved, before the bank has the transfer', async () => {
    const { stubs, held: bankHeld } = transferStubsHolding('submitToBank');
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const request = transferRequest();
      const { created, handle } = await create(taskQueue, request);
      const answer = await created;
      expect(answer).toEqual({ transferId: expect.stringMatching(UUID), created: true });
      expect(stubs.seen().slice(0, 2)).toEqual([
        { name: 'nameEnquiry', input: enquiry },
        { name: 'reserveFunds', input: reservation(answer.transferId, request) },
      ]);
      expect(stubs.inputsOf('reserveFunds')[0].request).toMatchObject({ amountMinor: 1_234_567, feeMinor: 2_500 });
      expect(await handle.query(statusQuery)).toMatchObject({
        transferId: answer.transferId,
        status: 'pending',
        connector: 'sandbox',
      });
      bankHeld.open();
      await handle.signal(bankConfirmedSignal, bankSays('successful'));
      expect(await handle.result()).toMatchObject({ status: 'completed' });
    });
  });

  it('answers repeats of the same request with the same id (created: false), reserving once', async () => {
    const stubs = transferStubs();
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const request = transferRequest();
      const { created, handle } = await create(taskQueue, request);
      const first = await created;
      const again = await handle.executeUpdate(createUpdate, { args: [request] });
      expect(again).toEqual({ transferId: first.transferId, created: false });
      expect(stubs.inputsOf('nameEnquiry')).toEqual([enquiry]);
      expect(stubs.inputsOf('reserveFunds')).toEqual([reservation(first.transferId, request)]);
      await handle.signal(bankConfirmedSignal, bankSays('successful'));
      await handle.result();
    });
  });

  it('refuses another body under the same reference as duplicate_reference, naming the transfer', async () => {
    const stubs = transferStubs();
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { request, handle, transferId } = await accepted(taskQueue);
      await expect(
        handle.executeUpdate(createUpdate, { args: [{ ...request, amountMinor: 1_234_568, requestHash: 'another' }] }),
      ).rejects.toMatchObject({ cause: { type: 'duplicate_reference', details: [{ transfer_id: transferId }] } });
      expect(stubs.inputsOf('reserveFunds')).toEqual([reservation(transferId, request)]);
      await handle.signal(bankConfirmedSignal, bankSays('successful'));
      expect(await handle.result()).toMatchObject({ transferId, status: 'completed' });
    });
  });

  it('ends the run refused when reserveFunds refuses, after settling the reservation attempt', async () => {
    const stubs = transferStubs({
      reserveFunds: async () => {
        throw refusal('insufficient_balance', 'wallet balance 1000 is below the 1237067 kobo required', {
          required: 1_237_067,
          available: 1_000,
        });
      },
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const request = transferRequest();
      const { created, handle } = await create(taskQueue, request);
      await expect(created).rejects.toMatchObject({
        cause: { type: 'insufficient_balance', details: [{ required: 1_237_067, available: 1_000 }] },
      });
      await expect(handle.result()).rejects.toMatchObject({ cause: { type: 'transfer_refused' } });
      const [reserved] = stubs.inputsOf('reserveFunds');
      expect(stubs.names()).toEqual(['nameEnquiry', 'reserveFunds', 'settleReservation']);
      expect(stubs.inputsOf('settleReservation')).toEqual([{ transferId: reserved.transferId, request }]);
    });
  });

  it('settles the reservation when the name enquiry refuses too, and ends the run refused', async () => {
    const stubs = transferStubs({
      nameEnquiry: async () => {
        throw refusal('invalid_account', 'recipient account 0123456789 was not found at bank 058');
      },
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const request = transferRequest();
      const { created, handle } = await create(taskQueue, request);
      await expect(created).rejects.toMatchObject({ cause: { type: 'invalid_account' } });
      await expect(handle.result()).rejects.toMatchObject({ cause: { type: 'transfer_refused' } });
      expect(stubs.names()).toEqual(['nameEnquiry', 'settleReservation']);
      expect(stubs.inputsOf('settleReservation')).toEqual([{ transferId: expect.stringMatching(UUID), request }]);
    });
  });

  it("asks the name enquiry with a saved recipient's name, and refuses the create with both names when the bank's differs", async () => {
    const details = { saved_name: 'ADA OBI', current_name: 'ADA OKAFOR' };
    const stubs = transferStubs({
      nameEnquiry: async () => {
        throw refusal('invalid_account', 'recipient account 0123456789 at bank 058 was saved as ADA OBI', details);
      },
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const request = { ...transferRequest(), savedName: 'ADA OBI' };
      const { created, handle } = await create(taskQueue, request);
      await expect(created).rejects.toMatchObject({ cause: { type: 'invalid_account', details: [details] } });
      await expect(handle.result()).rejects.toMatchObject({ cause: { type: 'transfer_refused' } });
      expect(stubs.inputsOf('nameEnquiry')).toEqual([{ ...enquiry, savedName: 'ADA OBI' }]);
      expect(stubs.names()).toEqual(['nameEnquiry', 'settleReservation']);
    });
  });

  it("takes over a reservation an earlier execution committed, with that reservation's connector for its bank calls", async () => {
    // The name enquiry fails here, but an earlier execution of this task reserved the transfer with
    // paystack: the transfer is created after all, and its bank is paystack's, never this run's default.
    const stubs = transferStubs({
      nameEnquiry: async () => {
        throw refusal('invalid_account', 'recipient account 0123456789 was not found at bank 058');
      },
      settleReservation: async ({ transferId }) => committedReservation(transferId, 'paystack'),
      submitToBank: async () => ({ status: 'successful', sessionId: BANK_SESSION, providerCode: '00' }),
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const request = transferRequest();
      const { created, handle } = await create(taskQueue, request);
      const { transferId } = await created;
      expect(await handle.result()).toMatchObject({ status: 'completed', connector: 'paystack' });
      expect(stubs.names()).toEqual([
        'nameEnquiry',
        'settleReservation',
        'submitToBank',
        'markProcessing',
        'settleTransfer',
      ]);
      expect(stubs.inputsOf('submitToBank')).toEqual([
        { transferId, request, recipientName: 'ADA OBI', connector: 'paystack', markProcessing: true },
      ]);
    });
  });
});

describe('accept: a create update lost with the task that handled it', () => {
  it('goes on with the reservation it made: submitted, settled, under the id the update answered', async () => {
    // The update's task reserved (a local activity, committed) and was lost before its completion
    // was recorded; the update was not offered again. The API answers the client's retry from the
    // row, so the run must find that reservation and carry the transfer on.
    const stubs = transferStubs({
      settleReservation: async ({ transferId }) => committedReservation(transferId, 'sandbox'),
      submitToBank: async () => ({ status: 'successful', sessionId: BANK_SESSION, providerCode: '00' }),
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const request = transferRequest();
      const handle = await started(taskQueue, { request });
      // A minute without the update (time skips), then the reservation settled under the run's id.
      const result = await handle.result();
      const [settled] = stubs.inputsOf('settleReservation');
      expect(settled).toEqual({ transferId: expect.stringMatching(UUID), request });
      expect(result).toMatchObject({ transferId: settled.transferId, status: 'completed', connector: 'sandbox' });
      expect(stubs.names()).toEqual(['settleReservation', 'submitToBank', 'markProcessing', 'settleTransfer']);
      expect(stubs.inputsOf('submitToBank')).toEqual([
        {
          transferId: settled.transferId,
          request,
          recipientName: 'ADA OBI',
          connector: 'sandbox',
          markProcessing: true,
        },
      ]);
    });
  });

  it('answers a create update that arrives while it settles with the transfer it found, not a new one', async () => {
    const held = gate();
    const stubs = transferStubs({
      settleReservation: async ({ transferId }) => {
        await held.opened;
        return committedReservation(transferId, 'sandbox');
      },
      submitToBank: async () => ({ status: 'successful', sessionId: BANK_SESSION, providerCode: '00' }),
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const request = transferRequest();
      const handle = await started(taskQueue, { request });
      await stub.env.sleep('1 minute');
      const settling = await stubs.calledWith('settleReservation');
      const late = handle.executeUpdate(createUpdate, { args: [request] });
      held.open();
      expect(await late).toEqual({ transferId: settling.transferId, created: false });
      expect(await handle.result()).toMatchObject({ transferId: settling.transferId, status: 'completed' });
      expect(stubs.inputsOf('nameEnquiry')).toEqual([]);
      expect(stubs.inputsOf('reserveFunds')).toEqual([]);
    });
  });
});

describe('submit: the bank gets the transfer', () => {
  it('sends it to the connector whose name enquiry answered, marks it processing, and keeps an immediate answer', async () => {
    const stubs = transferStubs({
      submitToBank: async () => ({ status: 'successful', sessionId: BANK_SESSION, providerCode: '00' }),
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { request, handle, transferId } = await accepted(taskQueue);
      const outcome = { status: 'successful', sessionId: BANK_SESSION, providerCode: '00', source: 'submission' };
      expect(await handle.result()).toMatchObject({
        status: 'completed',
        sessionId: BANK_SESSION,
        bankOutcome: outcome,
      });
      expect(stubs.seen()).toEqual([
        { name: 'nameEnquiry', input: enquiry },
        { name: 'reserveFunds', input: reservation(transferId, request) },
        { name: 'submitToBank', input: submission(transferId, request) },
        { name: 'markProcessing', input: { transferId, sessionId: BANK_SESSION, taken: true } },
        { name: 'settleTransfer', input: { transferId, outcome } },
      ]);
    });
  });

  it('reverses a transfer the bank rejects definitively, with its reason and code', async () => {
    const stubs = transferStubs({
      submitToBank: async () => {
        throw refusal('bank_rejected', 'Do not honour', { providerCode: '05' });
      },
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { handle, transferId } = await accepted(taskQueue);
      expect(await handle.result()).toMatchObject({
        status: 'failed',
        bankOutcome: { status: 'failed', message: 'Do not honour', providerCode: '05', source: 'submission' },
      });
      expect(stubs.names().slice(2)).toEqual(['submitToBank', 'markProcessing', 'reverseTransfer']);
      expect(stubs.inputsOf('markProcessing')).toEqual([{ transferId, sessionId: '', taken: true }]);
      expect(stubs.inputsOf('reverseTransfer')).toEqual([{ transferId, reason: 'Do not honour', providerCode: '05' }]);
    });
  });

  it('passes a transfer the bank did not take to the next connector whose name enquiry answers', async () => {
    const stubs = transferStubs({
      nameEnquiry: answers(ENQUIRY, { accountName: 'ADA OBI', sessionId: 'generic-enquiry', connector: 'generic' }),
      submitToBank: async (input) => {
        if (input.connector === 'sandbox') throw refusal('bank_not_taken', 'service unavailable for this bank');
        return { status: 'successful', sessionId: BANK_SESSION, providerCode: '00' };
      },
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { request, handle, transferId } = await accepted(taskQueue);
      expect(await handle.result()).toMatchObject({ status: 'completed', connector: 'generic' });
      expect(stubs.seen().slice(2)).toEqual([
        { name: 'submitToBank', input: submission(transferId, request) },
        { name: 'nameEnquiry', input: { ...enquiry, exclude: ['sandbox'] } },
        { name: 'assignConnector', input: { transferId, connector: 'generic', sessionId: 'generic-enquiry' } },
        {
          name: 'submitToBank',
          input: { ...submission(transferId, request), connector: 'generic', sessionId: 'generic-enquiry' },
        },
        { name: 'markProcessing', input: { transferId, sessionId: BANK_SESSION, taken: true } },
        {
          name: 'settleTransfer',
          input: {
            transferId,
            outcome: { status: 'successful', sessionId: BANK_SESSION, providerCode: '00', source: 'submission' },
          },
        },
      ]);
    });
  });

  it('reverses a transfer no connector takes', async () => {
    const stubs = transferStubs({
      nameEnquiry: async (input) => {
        if (input.exclude) throw refusal('no_connector', 'no other test connector can take this transfer');
        return { ...ENQUIRY };
      },
      submitToBank: async () => {
        throw refusal('bank_not_taken', 'service unavailable for this bank');
      },
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { handle, transferId } = await accepted(taskQueue);
      expect(await handle.result()).toMatchObject({ status: 'failed', connector: 'sandbox' });
      expect(stubs.names().slice(2)).toEqual(['submitToBank', 'nameEnquiry', 'markProcessing', 'reverseTransfer']);
      expect(stubs.inputsOf('reverseTransfer')).toEqual([{ transferId, reason: 'service unavailable for this bank' }]);
    });
  });

  it('asks the bank once the submission retries run out, and its answer decides: never sent again', async () => {
    const stubs = transferStubs({
      submitToBank: async () => {
        throw new Error('bank unreachable');
      },
      queryBankStatus: async () => PAID,
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { request, handle, transferId } = await accepted(taskQueue);
      expect(await handle.result()).toMatchObject({ status: 'completed', bankOutcome: PAID });
      const submissions = stubs.inputsOf('submitToBank');
      expect(submissions.length).toBeGreaterThan(1);
      expect(submissions).toEqual(Array(submissions.length).fill(submission(transferId, request)));
      expect(stubs.seen().slice(2 + submissions.length)).toEqual([
        { name: 'queryBankStatus', input: { transferId, connector: 'sandbox' } },
        // The bank's status settled it: the mark an attempt cut short may have left goes.
        { name: 'markProcessing', input: { transferId, sessionId: '', taken: true } },
        { name: 'settleTransfer', input: { transferId, outcome: PAID } },
      ]);
    });
  });

  it('keeps a transfer the bank does not know after the retries processing, until its definitive answer', async () => {
    const stubs = transferStubs({
      submitToBank: async () => {
        throw new Error('bank unreachable');
      },
      queryBankStatus: answers<Awaited<ReturnType<TransferActivities['queryBankStatus']>>>(
        { status: 'unknown' },
        {
          status: 'failed',
          sessionId: '',
          providerCode: '25',
          message: 'unable to locate record',
          source: 'status_query',
        },
      ),
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { handle, transferId } = await accepted(taskQueue);
      expect(await handle.result()).toMatchObject({ status: 'failed', statusChecks: 1 });
      // "No such transfer" settles nothing: the mark an attempt cut short may have left stays.
      expect(stubs.inputsOf('markProcessing')).toEqual([{ transferId, sessionId: '', taken: false }]);
      const afterSubmissions = stubs.names().filter((name) => name !== 'submitToBank');
      expect(afterSubmissions.slice(2)).toEqual([
        'queryBankStatus',
        'markProcessing',
        'queryBankStatus',
        'reverseTransfer',
      ]);
      expect(stubs.inputsOf('reverseTransfer')).toEqual([
        { transferId, reason: 'unable to locate record', providerCode: '25' },
      ]);
    });
  });
});

describe('await: the bank’s answer', () => {
  it('settles on the bank’s confirmation signal', async () => {
    const stubs = transferStubs();
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { handle, transferId } = await accepted(taskQueue);
      await handle.signal(bankConfirmedSignal, bankSays('successful'));
      expect(await handle.result()).toMatchObject({ status: 'completed', bankOutcome: bankSays('successful') });
      expect(stubs.names()).toEqual([
        'nameEnquiry',
        'reserveFunds',
        'submitToBank',
        'markProcessing',
        'settleTransfer',
      ]);
      expect(stubs.inputsOf('settleTransfer')).toEqual([{ transferId, outcome: bankSays('successful') }]);
    });
  });

  it('asks the bank on its own schedule (15 s, 30 s, 1 min, 2 min, …) until it answers', async () => {
    const stubs = transferStubs({
      queryBankStatus: answers<Awaited<ReturnType<TransferActivities['queryBankStatus']>>>(
        { status: 'pending' },
        { status: 'pending' },
        { status: 'pending' },
        PAID,
      ),
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { handle, transferId } = await accepted(taskQueue);
      expect(await handle.result()).toMatchObject({ status: 'completed', statusChecks: 4, stuck: false });
      expect(stubs.names().slice(4)).toEqual([...Array(4).fill('queryBankStatus'), 'settleTransfer']);
      expect(stubs.inputsOf('queryBankStatus')).toEqual(Array(4).fill({ transferId, connector: 'sandbox' }));
      // Server time: no check comes before its time.
      const [submitted] = stubs.calls.filter((call) => call.name === 'submitToBank');
      const checks = stubs.calls.filter((call) => call.name === 'queryBankStatus');
      const waits = checks.map((check, i) => check.scheduledAtMs - (checks[i - 1] ?? submitted!).scheduledAtMs);
      for (const [i, atLeast] of [15_000, 30_000, 60_000, 120_000].entries()) {
        expect(waits[i]).toBeGreaterThanOrEqual(atLeast);
      }
    });
  });

  it('flags a transfer unconfirmed after 24 h as stuck, keeps it processing, and settles when the bank answers', async () => {
    const pendingChecks = Array(31).fill({ status: 'pending' });
    const stubs = transferStubs({
      queryBankStatus: answers<Awaited<ReturnType<TransferActivities['queryBankStatus']>>>(...pendingChecks, PAID),
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { handle, transferId } = await accepted(taskQueue);
      expect(await handle.result()).toMatchObject({ status: 'completed', stuck: true, statusChecks: 32 });
      // 7 early checks, then hourly: the 31st is the first past 24 h of waiting.
      expect(stubs.names().slice(4)).toEqual([
        ...Array(31).fill('queryBankStatus'),
        'flagStuck',
        'queryBankStatus',
        'settleTransfer',
      ]);
      expect(stubs.inputsOf('flagStuck')).toEqual([{ transferId }]);
      const at = (name: string) => stubs.calls.find((call) => call.name === name)!.scheduledAtMs;
      expect(at('flagStuck') - at('submitToBank')).toBeGreaterThanOrEqual(STUCK_AFTER_MS);
    });
  });

  it('goes on waiting in a run continued as new: no new reservation or submission, its checks and stuck flag kept', async () => {
    const stubs = transferStubs({
      queryBankStatus: async () => PAID,
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const request = transferRequest();
      const transferId = '6f1c2e0a-5d43-4c1e-9d55-0f4a3b2c1d0e';
      const input: TransferWorkflowInput = {
        request,
        resume: {
          transferId,
          recipientName: 'ADA OBI',
          sessionId: BANK_SESSION,
          waitedMs: 30 * HOUR,
          stuck: true,
          statusChecks: 33,
          connector: 'generic',
        },
      };
      const handle = await started(taskQueue, input);
      expect(await handle.result()).toMatchObject({
        transferId,
        status: 'completed',
        sessionId: BANK_SESSION,
        stuck: true,
        statusChecks: 34,
        connector: 'generic',
      });
      expect(stubs.seen()).toEqual([
        { name: 'queryBankStatus', input: { transferId, connector: 'generic' } },
        { name: 'settleTransfer', input: { transferId, outcome: PAID } },
      ]);
      // Past 24 h, a stuck transfer's bank is asked every 6 h.
      const startedAt = (await handle.describe()).startTime.getTime();
      expect(stubs.calls[0]!.scheduledAtMs - startedAt).toBeGreaterThanOrEqual(6 * HOUR);
    });
  });
});

describe("a batch's item: the bank's word kept before its run started (decisions §14)", () => {
  const itemInput = (transferId: string): TransferWorkflowInput => ({
    request: transferRequest(),
    shape: 'lean',
    resume: {
      transferId,
      recipientName: 'ADA OBI',
      sessionId: BANK_SESSION,
      waitedMs: 0,
      stuck: false,
      statusChecks: 0,
      connector: 'generic',
      earlyWord: true,
    },
  });

  it('settles in its first task on the kept word: no signal, no status query', async () => {
    const kept: BankOutcome = {
      status: 'successful',
      sessionId: BANK_SESSION,
      providerCode: '00',
      source: 'callback',
      connector: 'generic',
    };
    const stubs = transferStubs({ itemBankWord: async () => kept });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const transferId = '0b6a1f4e-6c2d-4e0b-9a7d-2f5c8e1d3a41';
      const handle = await started(taskQueue, itemInput(transferId));
      expect(await handle.result()).toMatchObject({ transferId, status: 'completed', statusChecks: 0 });
      expect(stubs.seen()).toEqual([
        { name: 'itemBankWord', input: { transferId } },
        { name: 'settleTransfer', input: { transferId, outcome: kept } },
      ]);
    });
  });

  it("leaves a word kept from a connector that does not hold it, and waits for the holder's", async () => {
    const stubs = transferStubs({
      itemBankWord: async () => ({ status: 'failed', providerCode: '57', source: 'callback', connector: 'paystack' }),
      queryBankStatus: async () => PAID,
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const transferId = '5d2c9e7a-1b3f-4a6e-8c0d-7e9f1a2b3c4d';
      const handle = await started(taskQueue, itemInput(transferId));
      expect(await handle.result()).toMatchObject({ transferId, status: 'completed', statusChecks: 1 });
      expect(stubs.seen()).toEqual([
        { name: 'itemBankWord', input: { transferId } },
        { name: 'queryBankStatus', input: { transferId, connector: 'generic' } },
        { name: 'settleTransfer', input: { transferId, outcome: PAID } },
      ]);
    });
  });
});

describe('possibly taken: only the connector that may hold the transfer decides (decisions §17)', () => {
  type Status = Awaited<ReturnType<TransferActivities['queryBankStatus']>>;
  const NOT_FOUND: Status = { status: 'unknown' };
  const STILL_PENDING: Status = { status: 'pending' };

  /** A submission answered `possibly_taken` by the activity, its last ambiguous attempt now (server time). */
  const possiblyTakenAnswer = (kind: 'lost' | 'refused', reason: string) => async (): Promise<SubmissionAnswer> => ({
    status: 'possibly_taken',
    possiblyTaken: {
      connector: 'sandbox',
      lastAttemptAt: Context.current().info.currentAttemptScheduledTimestampMs,
      kind,
      reason,
    },
  });
  const at = (stubs: ReturnType<typeof transferStubs>, name: string) =>
    stubs.calls.filter((call) => call.name === name).map((call) => call.scheduledAtMs);

  it('never resubmits on its own: "not found" counts from 2 min after the lost attempt, and twice a minute apart proves it never taken, then it is sent again there', async () => {
    const stubs = transferStubs({
      submitToBank: answersEach<SubmissionAnswer>(
        possiblyTakenAnswer('lost', 'paystack did not answer POST /transfer within 5000 ms'),
        async () => ({ status: 'pending', sessionId: BANK_SESSION, providerCode: 'pending' }),
      ),
      queryBankStatus: answers<Status>(NOT_FOUND, NOT_FOUND, NOT_FOUND, NOT_FOUND, NOT_FOUND, PAID),
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { request, handle, transferId } = await accepted(taskQueue);
      expect(await handle.result()).toMatchObject({ status: 'completed', bankOutcome: PAID, connector: 'sandbox' });
      expect(stubs.seen().slice(2)).toEqual([
        { name: 'submitToBank', input: submission(transferId, request) },
        { name: 'markProcessing', input: { transferId, sessionId: '', taken: false } },
        ...Array(5).fill({ name: 'queryBankStatus', input: { transferId, connector: 'sandbox' } }),
        {
          name: 'clearPossiblyTaken',
          input: { transferId, lastAttemptAt: at(stubs, 'submitToBank')[0] },
        },
        // Sent again, already processing: this task marks it, as before the lean shape.
        { name: 'submitToBank', input: resubmission(transferId, request) },
        { name: 'markProcessing', input: { transferId, sessionId: BANK_SESSION, taken: true } },
        { name: 'queryBankStatus', input: { transferId, connector: 'sandbox' } },
        { name: 'settleTransfer', input: { transferId, outcome: PAID } },
      ]);
      const [lost, resent] = at(stubs, 'submitToBank');
      const checks = at(stubs, 'queryBankStatus');
      // 15 s, 45 s and 105 s are too early to count; the 4th at 2 min counts, the 5th a minute later proves.
      expect(checks[2]! - lost!).toBeLessThan(NOT_FOUND_GRACE_MS);
      expect(checks[3]! - lost!).toBeGreaterThanOrEqual(NOT_FOUND_GRACE_MS);
      expect(checks[4]! - checks[3]!).toBeGreaterThanOrEqual(NOT_FOUND_CONFIRM_MS);
      expect(checks[4]! - checks[3]!).toBeLessThan(NOT_FOUND_CONFIRM_MS + 5_000);
      expect(resent!).toBeGreaterThanOrEqual(checks[4]!);
    });
  });

  it('starts the proof over when the connector finds the transfer between two "not found"s', async () => {
    const stubs = transferStubs({
      submitToBank: answersEach<SubmissionAnswer>(
        possiblyTakenAnswer('lost', 'generic answered POST /transfers with HTTP 502'),
        async () => ({ status: 'successful', sessionId: BANK_SESSION, providerCode: '00' }),
      ),
      // 15 s, 45 s, 105 s too early; 2 min counts; 3 min finds it; 13 min counts again; 14 min proves.
      queryBankStatus: answers<Status>(NOT_FOUND, NOT_FOUND, NOT_FOUND, NOT_FOUND, STILL_PENDING, NOT_FOUND, NOT_FOUND),
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { handle } = await accepted(taskQueue);
      expect(await handle.result()).toMatchObject({ status: 'completed', statusChecks: 7 });
      const [, resent] = at(stubs, 'submitToBank');
      const checks = at(stubs, 'queryBankStatus');
      expect(checks).toHaveLength(7);
      expect(checks[6]! - checks[5]!).toBeGreaterThanOrEqual(NOT_FOUND_CONFIRM_MS);
      expect(resent!).toBeGreaterThanOrEqual(checks[6]!);
      expect(stubs.names().filter((name) => name === 'clearPossiblyTaken')).toHaveLength(1);
    });
  });

  it('after a refusal that proves nothing, passes the transfer on only once its connector has proved it never took it', async () => {
    const stubs = transferStubs({
      nameEnquiry: answers(ENQUIRY, { accountName: 'ADA OBI', sessionId: 'generic-enquiry', connector: 'generic' }),
      submitToBank: async (input) =>
        input.connector === 'sandbox'
          ? possiblyTakenAnswer('refused', 'paystack refused: Transfer reference has been used')()
          : { status: 'successful', sessionId: BANK_SESSION, providerCode: '00' },
      queryBankStatus: answers<Status>(NOT_FOUND),
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { request, handle, transferId } = await accepted(taskQueue);
      expect(await handle.result()).toMatchObject({ status: 'completed', connector: 'generic' });
      const names = stubs.names();
      const proved = names.indexOf('clearPossiblyTaken');
      expect(names.slice(2, proved)).toEqual(['submitToBank', 'markProcessing', ...Array(5).fill('queryBankStatus')]);
      expect(stubs.seen().slice(proved + 1)).toEqual([
        { name: 'nameEnquiry', input: { ...enquiry, exclude: ['sandbox'] } },
        { name: 'assignConnector', input: { transferId, connector: 'generic', sessionId: 'generic-enquiry' } },
        {
          name: 'submitToBank',
          input: { ...resubmission(transferId, request), connector: 'generic', sessionId: 'generic-enquiry' },
        },
        { name: 'markProcessing', input: { transferId, sessionId: BANK_SESSION, taken: true } },
        {
          name: 'settleTransfer',
          input: {
            transferId,
            outcome: { status: 'successful', sessionId: BANK_SESSION, providerCode: '00', source: 'submission' },
          },
        },
      ]);
      // Nothing went to the next connector before the proof.
      const beforeProof = stubs.calls.slice(0, proved).filter((call) => call.name === 'submitToBank');
      expect(beforeProof.map((call) => call.input.connector)).toEqual(['sandbox']);
    });
  });

  it('never fails a possibly taken transfer on a refusal: it waits for the connector, however long', async () => {
    const stubs = transferStubs({
      submitToBank: possiblyTakenAnswer('refused', 'generic refused POST /transfers (HTTP 409, conflict)'),
      queryBankStatus: answers<Status>(...Array(8).fill(STILL_PENDING), PAID),
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { handle } = await accepted(taskQueue);
      expect(await handle.result()).toMatchObject({ status: 'completed', bankOutcome: PAID });
      expect(stubs.names()).not.toContain('reverseTransfer');
      expect(stubs.names().filter((name) => name === 'submitToBank')).toHaveLength(1);
    });
  });

  it('keeps a transfer marked possibly taken where it is when it was to pass on (an attempt still on its way)', async () => {
    const stubs = transferStubs({
      nameEnquiry: answers(ENQUIRY, { accountName: 'ADA OBI', sessionId: 'generic-enquiry', connector: 'generic' }),
      submitToBank: async () => {
        throw refusal('bank_not_taken', 'Your balance is not enough to fulfil this request');
      },
      assignConnector: async () => false,
      queryBankStatus: async () => PAID,
    });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { handle, transferId } = await accepted(taskQueue);
      expect(await handle.result()).toMatchObject({ status: 'completed', connector: 'sandbox' });
      expect(stubs.names().slice(2)).toEqual([
        'submitToBank',
        'nameEnquiry',
        'assignConnector',
        'markProcessing',
        'queryBankStatus',
        'settleTransfer',
      ]);
      expect(stubs.inputsOf('markProcessing')).toEqual([{ transferId, sessionId: '', taken: false }]);
    });
  });

  it("records another connector's word as a conflict and applies only the holder's", async () => {
    const stubs = transferStubs();
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { handle, transferId } = await accepted(taskQueue);
      await stubs.calledWith('markProcessing');
      const foreign = bankSays('successful', { connector: 'paystack' });
      await handle.signal(bankConfirmedSignal, foreign);
      await stubs.calledWith('recordConnectorConflict');
      expect((await handle.query(statusQuery)).bankOutcome).toBeUndefined();
      const holders = bankSays('failed', { connector: 'sandbox', message: 'beneficiary account closed' });
      await handle.signal(bankConfirmedSignal, holders);
      expect(await handle.result()).toMatchObject({ status: 'failed', bankOutcome: holders });
      expect(stubs.inputsOf('recordConnectorConflict')).toEqual([{ transferId, bank: foreign }]);
      expect(stubs.names()).not.toContain('settleTransfer');
    });
  });

  it("starts a batch's possibly taken item where it waits: status queries only, never a submission", async () => {
    const stubs = transferStubs({ queryBankStatus: answers<Status>(STILL_PENDING, PAID) });
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const request = transferRequest();
      const transferId = '0b7c9a55-6c2d-4d7e-8f10-2a3b4c5d6e7f';
      const handle = await started(taskQueue, {
        request,
        resume: {
          transferId,
          recipientName: 'ADA OBI',
          sessionId: '',
          waitedMs: 0,
          stuck: false,
          statusChecks: 0,
          connector: 'paystack',
          possiblyTaken: { connector: 'paystack', lastAttemptAt: 0, kind: 'lost', reason: 'answer lost' },
        },
      });
      expect(await handle.result()).toMatchObject({ status: 'completed', connector: 'paystack' });
      expect(stubs.names()).toEqual(['queryBankStatus', 'queryBankStatus', 'settleTransfer']);
    });
  });
});

describe('finish: settle or reverse once', () => {
  it('reverses on the bank’s failure, with its reason and code', async () => {
    const stubs = transferStubs();
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { handle, transferId } = await accepted(taskQueue);
      const failed = bankSays('failed', { message: 'beneficiary account closed' });
      await handle.signal(bankConfirmedSignal, failed);
      expect(await handle.result()).toMatchObject({ status: 'failed', bankOutcome: failed });
      expect(stubs.names().slice(4)).toEqual(['reverseTransfer']);
      expect(stubs.inputsOf('reverseTransfer')).toEqual([
        { transferId, reason: 'beneficiary account closed', providerCode: '51' },
      ]);
    });
  });

  it.each([
    ['failed', 'reverseTransfer'],
    ['successful', 'settleTransfer'],
  ] as const)(
    'applies an operator’s %s resolution (resolveUpdate) when the bank is silent, and answers once done',
    async (outcome, moved) => {
      const stubs = transferStubs();
      await stub.withWorker(stubs.activities, async (taskQueue) => {
        const { handle, transferId } = await accepted(taskQueue);
        const resolution = operator(outcome);
        const resolved = await handle.executeUpdate(resolveUpdate, { args: [resolution] });
        expect(resolved).toEqual({
          transferId,
          status: outcome === 'failed' ? 'failed' : 'completed',
          decidedBy: 'operator',
          resolution,
        });
        expect(stubs.names().slice(4)).toEqual([moved]);
        expect(stubs.inputsOf(moved)).toEqual([
          outcome === 'failed'
            ? { transferId, reason: 'resolved by operator: confirmed with the bank by phone', resolution }
            : {
                transferId,
                outcome: { status: 'successful', source: 'callback', sessionId: BANK_SESSION },
                resolution,
              },
        ]);
        expect(await handle.result()).toMatchObject({ resolution });
      });
    },
  );

  it('holds one resolution: a repeat of its outcome shares its answer, the other outcome is refused already_resolved', async () => {
    const { stubs, held: reversalHeld } = transferStubsHolding('reverseTransfer');
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { handle, transferId, resolution: first, resolving } = await reversingOnResolution(taskQueue, stubs);
      // While the reversal is being written, another operator says the opposite, then the same.
      await expect(
        handle.executeUpdate(resolveUpdate, { args: [{ ...operator('successful'), operator: 'bola' }] }),
      ).rejects.toMatchObject({
        cause: {
          type: 'already_resolved',
          message: `transfer ${transferId} is already being resolved as failed by ${first.operator}: ${first.note}`,
        },
      });
      const repeat = handle.executeUpdate(resolveUpdate, { args: [{ ...first, operator: 'bola', note: 'same' }] });
      reversalHeld.open();
      const answer = { transferId, status: 'failed', decidedBy: 'operator', resolution: first };
      expect(await resolving.result()).toEqual(answer);
      expect(await repeat).toEqual(answer);
      // Reversed once (the settlement is a local activity: an execution of its task run again asks
      // the books again, and they answer the reversal).
      expect(new Set(stubs.names().filter((name) => name === 'reverseTransfer' || name === 'settleTransfer'))).toEqual(
        new Set(['reverseTransfer']),
      );
    });
  });

  it('refuses a resolution while the run has no transfer yet', async () => {
    const stubs = transferStubs();
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const request = transferRequest();
      // Started without its create update (as by hand): it waits a minute for one, then ends.
      const handle = await started(taskQueue, { request });
      await expect(handle.executeUpdate(resolveUpdate, { args: [operator('failed')] })).rejects.toMatchObject({
        cause: { type: 'not_created' },
      });
      // Nothing was reserved under its id: the run ends refused, leaving the reference free.
      await expect(handle.result()).rejects.toMatchObject({ cause: { type: 'transfer_refused' } });
      expect(stubs.names()).toEqual(['settleReservation']);
    });
  });

  it('keeps the bank’s word when it came first: the operator’s resolution is recorded, not applied', async () => {
    const { stubs, held: bankHeld } = transferStubsHolding('submitToBank');
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { handle, transferId } = await accepted(taskQueue);
      await stubs.calledWith('submitToBank');
      // Both words are in before the transfer is finished: the bank's first, then an operator's.
      await handle.signal(bankConfirmedSignal, bankSays('failed', { message: 'beneficiary account closed' }));
      const resolution = operator('successful');
      const resolving = await handle.startUpdate(resolveUpdate, {
        args: [resolution],
        waitForStage: WorkflowUpdateStage.ACCEPTED,
      });
      bankHeld.open();
      expect(await resolving.result()).toEqual({ transferId, status: 'failed', decidedBy: 'bank', resolution });
      expect(await handle.result()).toMatchObject({ status: 'failed', resolution });
      expect(stubs.names().slice(4)).toEqual(['reverseTransfer']);
      expect(stubs.inputsOf('reverseTransfer')).toEqual([
        { transferId, reason: 'beneficiary account closed', providerCode: '51' },
      ]);
    });
  });

  it('records a late bank answer that contradicts the operator’s resolution as a discrepancy, moving nothing', async () => {
    const { stubs, held: reversalHeld } = transferStubsHolding('reverseTransfer');
    await stub.withWorker(stubs.activities, async (taskQueue) => {
      const { handle, transferId, resolution, resolving } = await reversingOnResolution(taskQueue, stubs);
      // The bank pays it out after all, while the reversal is being written.
      await handle.signal(bankConfirmedSignal, bankSays('successful'));
      reversalHeld.open();
      expect(await resolving.result()).toEqual({ transferId, status: 'failed', decidedBy: 'operator', resolution });
      expect(await handle.result()).toMatchObject({ status: 'failed', bankOutcome: bankSays('successful') });
      // The reversal was asked first and the books kept it. An execution of the settling task run
      // again with the bank's word in (the settlement is a local activity) may ask to settle: the
      // books answer the reversal, and the bank's word is kept as a discrepancy.
      const seen = stubs.seen().slice(4);
      expect(seen[0]).toEqual({
        name: 'reverseTransfer',
        input: { transferId, reason: 'resolved by operator: confirmed with the bank by phone', resolution },
      });
      expect(seen.filter((call) => call.name === 'recordDiscrepancy')).toEqual([
        { name: 'recordDiscrepancy', input: { transferId, bank: bankSays('successful') } },
      ]);
    });
  });
});
