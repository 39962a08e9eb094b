// One workflow per transfer (id `transfer:<tenant>:<reference>`), in four phases read top to bottom
// in transferWorkflow:
//   accept  — the API's Update-with-Start `create` enquires the recipient's name and reserves
//             amount + fee; the update answers the transfer's id as soon as the money is reserved
//             (a batch's item comes reserved by its batch: `reserved`, starting at submit, or
//             `resume` when its batch has submitted it too, starting at await);
//   approve — only for a transfer its tenant's policy held (decisions §20): reserved, it waits for
//             another key's `decideApproval` update until its expiry (a durable timer); rejected or
//             expired, it fails with its money returned and goes no further;
//   submit  — the transfer goes to the bank (transient faults retried);
//   await   — the bank's confirmation signal, or its status asked on our own schedule; unconfirmed
//             after 24 h the transfer stays `processing`, flagged as stuck, until the bank or an
//             operator's `resolve` update decides it (continue-as-new keeps long waits' histories short);
//   finish  — settle or reverse once (answering the operator's update), and keep a late
//             contradicting bank answer for operators.
import {
  ActivityFailure,
  ApplicationFailure,
  allHandlersFinished,
  condition,
  continueAsNew,
  log,
  patched,
  proxyActivities,
  proxyLocalActivities,
  setHandler,
  sleep,
  upsertSearchAttributes,
  uuid4,
  workflowInfo,
} from '@temporalio/workflow';
import type { TransferActivities } from './definitions.ts';
import { UNTIL_RECORDED } from '../activity-options.ts';
import { contradictsBooks, failureDetails, passedOnRefusal, transferFailure } from '../../src/transfers/domain.ts';
import {
  type BankOutcome,
  type OperatorResolution,
  type PossiblyTaken,
  type ResolveResult,
  type SubmissionAnswer,
  type TransferRecord,
  type TransferRequest,
  type TransferResume,
  type TransferState,
  type TransferWorkflowInput,
  type ApprovalDecision,
  type ApprovalResult,
  bankConfirmedSignal,
  createUpdate,
  decideApprovalUpdate,
  resolveUpdate,
  statusQuery,
} from './definitions.ts';
import {
  AmountMinorKey,
  TenantIdKey,
  TransferApprovalKey,
  TransferConnectorKey,
  TransferReferenceKey,
  TransferStatusKey,
} from '../search-attributes.ts';

const HOUR = 60 * 60 * 1000;

export const STUCK_AFTER_MS = 24 * HOUR;
/** "Not found" from the holder's status query counts only this long after the last ambiguous attempt (decisions §17). */
export const NOT_FOUND_GRACE_MS = 2 * 60 * 1000;
/** …and proves "not taken" only when a second one this much later says so again. */
export const NOT_FOUND_CONFIRM_MS = 60 * 1000;
/** The patch under which a possibly taken submission pins its transfer (decisions §17). */
const PINNED = 'possibly-taken';
/**
 * The patch of the lean shape (docs/workflows.md#the-lean-shape): the search attributes set at start by
 * whoever starts the run and never upserted, the processing mark made by the submission's activity,
 * the settlement a local activity in the task that takes the bank's final word, and the status
 * check's timer left to lapse rather than cancelled. Runs that began before it keep the older shape.
 */
const LEAN = 'lean-transfer';

// The create path's steps (the name enquiry, the reservation, and settling a reservation a refused
// create left behind) and marking the transfer processing run as local activities (createPath,
// ledgerLocal), inside the workflow task that reaches them: a create then takes one workflow task
// instead of three round trips through the server. None of them depends on which signal came
// first, so a workflow task that fails and runs again takes the same steps. Settling or reversing
// does depend on it (the bank's word against an operator's): the older shape schedules it as an
// activity from a completed task before it moves money; the lean shape runs it locally too, because
// the books decide it once and the run adopts what they hold (docs/workflows.md#the-lean-shape).
// The bank calls stay activities, which operators see pending in the Web UI. The create path runs
// while the API request waits: few, quick retries.
const createPath = proxyLocalActivities<TransferActivities>({
  startToCloseTimeout: '15s',
  retry: { initialInterval: '200ms', backoffCoefficient: 2, maximumAttempts: 3 },
});
// The bank may be down for a while: keep retrying transient faults for up to an hour.
const bank = proxyActivities<TransferActivities>({
  startToCloseTimeout: '1m',
  scheduleToCloseTimeout: '1h',
  retry: { initialInterval: '1s', backoffCoefficient: 2, maximumInterval: '1m' },
});
const statusCheck = proxyActivities<TransferActivities>({
  startToCloseTimeout: '30s',
  retry: { initialInterval: '1s', maximumAttempts: 3 },
});
// Ledger and projection writes must happen eventually, whatever the database's hiccups.
const ledger = proxyActivities<TransferActivities>(UNTIL_RECORDED);
const ledgerLocal = proxyLocalActivities<TransferActivities>(UNTIL_RECORDED);

/** Upserts search attributes in runs of the older shape only: lean runs get theirs at start. */
function upsertUnlessLean(lean: boolean, ...attributes: Parameters<typeof upsertSearchAttributes>): void {
  if (!lean) upsertSearchAttributes(...attributes);
}

/** When to ask the bank again, after `checks` status queries and `waitedMs` of waiting. */
export function nextStatusCheckMs(checks: number, waitedMs: number): number {
  const early = [15_000, 30_000, 60_000, 120_000, 300_000, 600_000, 1_800_000];
  if (checks < early.length) return early[checks]!;
  return waitedMs < STUCK_AFTER_MS ? HOUR : 6 * HOUR;
}

function refusalFrom(error: unknown): ApplicationFailure {
  return (
    passedOnRefusal(error instanceof ActivityFailure ? error.cause : error) ??
    // The bank or database could not be reached in time: the request may be retried.
    transferFailure('unavailable', 'the transfer could not be created right now; retry with the same reference')
  );
}

export async function transferWorkflow(input: TransferWorkflowInput): Promise<TransferState> {
  // Declared in the input, the shape costs no history event; only a run started by older code asks
  // the patch (and one recorded before the lean shape replays the older one).
  const lean = input.shape === 'lean' || patched(LEAN);
  const state = startingState(input);
  setHandler(statusQuery, () => state);
  // The bank may confirm before our submit activity has returned: keep the first word we get, from
  // the connector that holds the transfer only. Another's word (one racing a failover) is kept for
  // operators as a connector conflict, never applied (decisions §17).
  setHandler(bankConfirmedSignal, async (outcome: BankOutcome) => {
    const foreign = foreignConnector(outcome, state.connector);
    if (foreign !== undefined) {
      log.warn('a connector that does not hold the transfer answered about it: kept for operators', {
        transferId: state.transferId,
        holder: state.connector,
        connector: outcome.connector,
      });
      if (state.transferId) {
        await ledger.recordConnectorConflict({
          transferId: state.transferId,
          bank: { ...outcome, connector: foreign },
        });
      }
      return;
    }
    state.bankOutcome ??= outcome;
  });
  // Whose word the transfer was finished on, once it is settled or reversed.
  let decidedBy: ResolveResult['decidedBy'] | undefined;
  let transfer: Accepted | undefined = input.resume
    ? resumed(input.resume)
    : input.reserved
      ? { ...input.reserved }
      : undefined;
  setHandler(
    resolveUpdate,
    async (resolution: OperatorResolution): Promise<ResolveResult> => {
      // Kept, and applied only if the bank has not answered by the time the transfer is finished:
      // the bank's own word wins when it came first.
      state.resolution ??= resolution;
      await condition(() => decidedBy !== undefined);
      return {
        transferId: transfer!.transferId,
        status: state.status as ResolveResult['status'],
        decidedBy: decidedBy!,
        resolution: state.resolution,
      };
    },
    {
      validator: (resolution: OperatorResolution) => {
        if (state.approval?.status === 'required') {
          throw transferFailure(
            'awaiting_approval',
            `transfer ${state.transferId ?? input.request.reference} awaits its approval and was never sent; reject it instead`,
          );
        }
        if (!transfer) {
          throw transferFailure(
            'not_created',
            `reference ${input.request.reference} has no transfer yet (no money reserved); nothing to resolve`,
          );
        }
        // One resolution per transfer: a second one that says otherwise is refused, never silently dropped.
        const held = state.resolution;
        if (held && held.outcome !== resolution.outcome) {
          throw transferFailure(
            'already_resolved',
            `transfer ${transfer.transferId} is already being resolved as ${held.outcome} by ${held.operator}: ${held.note}`,
          );
        }
      },
    },
  );

  const held = holdForApproval(input, state);

  transfer = await accept(input, state, lean);
  if (!transfer) return state;
  upsertUnlessLean(lean, [
    { key: TenantIdKey, value: input.request.tenantId },
    { key: TransferReferenceKey, value: input.request.reference },
    { key: TransferStatusKey, value: state.status },
    { key: AmountMinorKey, value: input.request.amountMinor },
  ]);
  state.connector = transfer.connector;
  upsertUnlessLean(lean, [{ key: TransferConnectorKey, value: transfer.connector }]);
  if (held && !(await awaitApproval(transfer.transferId, state, held))) return state;
  if (!input.resume) await submit(input.request, transfer, state, lean);
  else if (input.resume.earlyWord && state.bankOutcome === undefined) await takeKeptWord(transfer, state);
  // Until the bank or an operator decides; a possibly taken submission its connector proves was
  // never taken goes on from here: sent again there, or to the next connector (decisions §17).
  // Time spent waiting for the bank, across resubmissions: the stuck flag's clock.
  const waiting = { ms: input.resume?.waitedMs ?? 0 };
  while (!(await awaitOutcome(input, transfer, state, waiting, lean))) {
    const began = Date.now();
    await afterNotTaken(input.request, transfer, state, lean);
    waiting.ms += Date.now() - began;
  }
  await finish(
    transfer.transferId,
    state,
    (decider) => {
      decidedBy = decider;
    },
    lean,
  );
  return state;
}

/**
 * The connector a bank's word came from when it is not the holder's; undefined for the holder's word
 * (and for a word naming no connector, or one a run not yet holding a connector gets).
 */
function foreignConnector(outcome: BankOutcome, holder: string | undefined): string | undefined {
  return outcome.connector !== undefined && holder !== undefined && outcome.connector !== holder
    ? outcome.connector
    : undefined;
}

/**
 * A batch's item whose run its batch started after submitting it (decisions §14): the bank may have
 * answered before the run was there, and its callback kept the word on the item. Read by a local
 * activity in the run's first task; a word not read (the database slow) is not lost: the callback
 * also asked the bank to send it again, and the first status query asks the bank itself.
 */
async function takeKeptWord(transfer: Accepted, state: TransferState): Promise<void> {
  try {
    const word = await createPath.itemBankWord({ transferId: transfer.transferId });
    // Kept only from the connector that holds the transfer (the callback weighed it so).
    if (word && foreignConnector(word, transfer.connector) === undefined) state.bankOutcome ??= word;
  } catch (error) {
    log.warn('the bank word kept for a batch item could not be read; waiting for the bank', {
      transferId: transfer.transferId,
      error: String(error),
    });
  }
}

/** A held transfer's decision, from the update that brings it to the run that records it. */
interface Held {
  decision?: ApprovalDecision;
  /** Set once the decision (or the expiry) is recorded: the update answers then. */
  recorded?: 'approved' | 'rejected' | 'expired';
}

/**
 * A transfer its tenant's policy holds (decisions §20; only a create's run: a batch's items come
 * decided by their batch): its approval expires `expiresInMs` after the run's start, the same
 * instant its row shows, and the `decideApproval` update is handled from now on. The first decision
 * the validator lets through is the one: any later one is refused `already_decided`, and the key
 * that made the transfer is refused `forbidden`.
 */
function holdForApproval(input: TransferWorkflowInput, state: TransferState): Held | undefined {
  const { approval } = input.request;
  const held: Held | undefined = approval && !input.resume && !input.reserved ? {} : undefined;
  if (held && approval) {
    state.approval = { status: 'required', expiresAt: workflowInfo().startTime.getTime() + approval.expiresInMs };
  }
  setHandler(
    decideApprovalUpdate,
    async (decision: ApprovalDecision): Promise<ApprovalResult> => {
      held!.decision ??= decision;
      await condition(() => held!.recorded !== undefined);
      return { status: held!.recorded === 'approved' ? 'approved' : 'rejected' };
    },
    {
      validator: (decision: ApprovalDecision) => {
        const id = state.transferId ?? input.request.reference;
        if (!held || !state.approval) {
          throw transferFailure('not_held', `transfer ${id} was not held for approval`);
        }
        const decided = held.decision
          ? held.decision.decision === 'approve'
            ? 'approved'
            : 'rejected'
          : state.approval.status;
        if (decided !== 'required') {
          throw transferFailure('already_decided', `transfer ${id} is already ${decided}`, { status: decided });
        }
        if (decision.actor.type === 'key' && decision.actor.id === input.request.createdByKeyId) {
          throw transferFailure('forbidden', 'a transfer cannot be approved by the key that made it');
        }
      },
    },
  );
  return held;
}

/**
 * Phase 2, approve (a held transfer only): waits for the decision until the approval expires, and
 * records it (or the expiry) once. True when approved: the transfer goes on to its bank. Rejected or
 * expired, the decision's activity has failed it with amount and fee returned, and the run ends.
 */
async function awaitApproval(transferId: string, state: TransferState, held: Held): Promise<boolean> {
  const approval = state.approval!;
  upsertSearchAttributes([{ key: TransferApprovalKey, value: 'required' }]);
  await condition(() => held.decision !== undefined, Math.max(1, approval.expiresAt - Date.now()));
  const { decision } = held;
  const outcome = decision ? (decision.decision === 'approve' ? 'approved' : 'rejected') : 'expired';
  approval.status = outcome;
  await ledger.decideApproval({ transferId, outcome, ...(decision ? { decision } : {}) });
  held.recorded = outcome;
  upsertSearchAttributes([{ key: TransferApprovalKey, value: outcome }]);
  if (outcome === 'approved') return true;
  state.status = 'failed';
  upsertSearchAttributes([{ key: TransferStatusKey, value: 'failed' }]);
  await condition(allHandlersFinished);
  return false;
}

/** The transfer once its money is reserved: what the later phases need of it. */
interface Accepted {
  transferId: string;
  recipientName: string;
  /** The connector that holds the transfer: its bank is the one asked about it, until a failover. */
  connector: string;
  /** The name enquiry's session at the transfer's connector (unknown to a run continued as new). */
  nameEnquirySessionId?: string;
}

function resumed(resume: TransferResume): Accepted {
  return { transferId: resume.transferId, recipientName: resume.recipientName, connector: resume.connector };
}

function startingState(input: TransferWorkflowInput): TransferState {
  const { resume } = input;
  return {
    transferId: resume?.transferId ?? input.reserved?.transferId,
    status: resume ? 'processing' : 'pending',
    sessionId: resume?.sessionId,
    stuck: resume?.stuck ?? false,
    bankOutcome: resume?.bankOutcome,
    resolution: undefined,
    statusChecks: resume?.statusChecks ?? 0,
    connector: resume?.connector,
    ...(resume?.possiblyTaken ? { possiblyTaken: resume.possiblyTaken } : {}),
    ...(resume?.triedConnectors ? { triedConnectors: resume.triedConnectors } : {}),
  };
}

/**
 * Phase 1, accept: answers `create` updates (the first reserves, repeats share its answer) and
 * waits for the first. Undefined when no update came; throws when the transfer was refused, which
 * ends the run failed so that a later request with the same reference may start afresh (the API
 * starts runs with ALLOW_DUPLICATE_FAILED_ONLY), while a created transfer's id never runs twice.
 */
async function accept(
  input: TransferWorkflowInput,
  state: TransferState,
  lean: boolean,
): Promise<Accepted | undefined> {
  const { request } = input;
  // A run continued as new, or a batch's item (reserved by its batch), is accepted already.
  let creation: Promise<Accepted> | undefined = input.resume
    ? Promise.resolve(resumed(input.resume))
    : input.reserved
      ? Promise.resolve({ ...input.reserved })
      : undefined;
  // The id the transfer gets: the run's first random draw, before any update is handled, so that
  // every execution of this run's tasks knows it, the ones that never see the create update too
  // (the same draw the first update's handler made before: histories replay unchanged).
  const transferId = creation ? undefined : uuid4();
  setHandler(createUpdate, async (repeat) => {
    if (repeat.requestHash !== request.requestHash) {
      throw transferFailure(
        'duplicate_reference',
        `reference ${request.reference} was already used for a different transfer`,
        { transfer_id: state.transferId ?? null },
      );
    }
    const first = creation === undefined;
    creation ??= reserve(request, state, transferId!, lean);
    const accepted = await creation;
    return { transferId: accepted.transferId, created: first };
  });

  if (!(await condition(() => creation !== undefined, '1 minute'))) {
    if (!patched('lost-create-update')) {
      log.warn('transfer workflow started without a create update');
      return undefined;
    }
    // No create update in this run's history. One may have come and been lost with the task that
    // handled it, after its local reservation committed (the worker killed before the task's
    // completion was recorded, and the update not offered again): the API answers the client's
    // retry from that row, so the transfer exists and must go on. Found by `npm run chaos`: a
    // transfer pending with its money reserved and no workflow. Settled as a refused create is:
    // a reservation that committed is the transfer; otherwise none can commit any more.
    creation = settleLostCreate(request, state, transferId!);
  }
  try {
    return await creation!;
  } catch (error) {
    // Refused (balance, limit, account) or not creatable now: nothing was reserved.
    state.status = 'refused';
    await condition(allHandlersFinished);
    throw transferFailure(
      'transfer_refused',
      `transfer ${request.reference} was not created: ${error instanceof Error ? error.message : String(error)}`,
    );
  }
}

/**
 * A run whose create update never reached its history: the transfer a lost execution of its
 * handler reserved, or a refusal (nothing reserved, and nothing can be now) that ends the run
 * failed, so the client's retry of the reference starts afresh.
 */
async function settleLostCreate(request: TransferRequest, state: TransferState, transferId: string): Promise<Accepted> {
  const settled = await settledReservation(transferId, request);
  if (!settled) {
    log.warn('transfer workflow started without a create update; nothing was reserved');
    throw transferFailure('not_created', `reference ${request.reference} was never created: no create update came`);
  }
  log.warn('transfer workflow found the reservation of a create update it never saw; going on with it', {
    transferId,
  });
  state.transferId = transferId;
  return settled;
}

/**
 * Makes certain no reservation under `transferId` can commit any more, and answers the transfer an
 * earlier one made if it did commit (its bank calls go to the connector recorded on its row).
 */
async function settledReservation(transferId: string, request: TransferRequest): Promise<Accepted | undefined> {
  const settled = await ledgerLocal.settleReservation({ transferId, request });
  return settled ? { transferId, recipientName: settled.recipientName, connector: settled.connector } : undefined;
}

/** The name enquiry and the reservation, run once for the first `create` update. */
async function reserve(
  request: TransferRequest,
  state: TransferState,
  transferId: string,
  lean: boolean,
): Promise<Accepted> {
  state.transferId = transferId;
  let recipientName: string | undefined;
  try {
    if (lean) {
      // One local activity, one marker: the enquiry and the reservation it answers for.
      const accepted = await createPath.acceptTransfer({
        transferId,
        request,
        ...(state.approval ? { approvalExpiresAt: state.approval.expiresAt } : {}),
      });
      state.connector = accepted.connector;
      const { recipientName: name, connector, nameEnquirySessionId } = accepted;
      return { transferId, recipientName: name, connector, nameEnquirySessionId };
    }
    // A saved recipient's name goes only when there is one: activity arguments are not compared
    // on replay, and histories recorded before saved recipients keep the input they had.
    const enquiry = await createPath.nameEnquiry({
      bankCode: request.recipientBankCode,
      accountNumber: request.recipientAccount,
      mode: request.mode,
      ...(request.savedName !== undefined ? { savedName: request.savedName } : {}),
    });
    recipientName = enquiry.accountName;
    state.connector = enquiry.connector;
    await createPath.reserveFunds({
      transferId,
      request,
      recipientName: enquiry.accountName,
      nameEnquirySessionId: enquiry.sessionId,
      connector: enquiry.connector,
      ...(state.approval ? { approvalExpiresAt: state.approval.expiresAt } : {}),
    });
    return { transferId, recipientName, connector: enquiry.connector, nameEnquirySessionId: enquiry.sessionId };
  } catch (error) {
    const refusal = refusalFrom(error);
    // An earlier reservation attempt (timed out, still on its way when a later one was refused,
    // or made by an execution of this task whose completion was lost) may have committed or yet
    // commit, whatever step failed here: a task whose completion was lost runs again from the
    // start under the same transfer id, and its name enquiry may fail where the first one's
    // reservation committed (found by `npm run chaos`: a pending transfer with its money reserved
    // and no workflow). Settle that for certain before answering: a reservation that committed
    // makes the transfer after all; otherwise none can commit any more, and the reference stays
    // free for the client's retry.
    const settled = await settledReservation(transferId, request);
    // Its bank calls go to the connector that took it, which this execution's enquiry may not know.
    if (settled) return { ...settled, recipientName: recipientName ?? settled.recipientName };
    throw refusal;
  }
}

/**
 * Phase 2, submit: the bank gets the transfer; whatever it says at once is kept as its outcome
 * (decisions §17). A refusal its connector recognises as made before processing, with no ambiguous
 * attempt before it, passes the transfer to the next connector whose name enquiry answers (§13);
 * any answer that leaves doubt pins it to this connector as possibly taken: never submitted
 * elsewhere, never failed on a refusal, decided by that connector's status queries alone.
 */
async function submit(
  request: TransferRequest,
  transfer: Accepted,
  state: TransferState,
  lean: boolean,
): Promise<void> {
  // A lean run is newer than the pinning patch: it never asks it (a patch is two history events).
  if (!lean && !patched(PINNED)) return submitUnpinned(request, transfer, state);
  const { transferId } = transfer;
  // Lean runs fold the processing mark into a first submission's activity (the transfer still
  // `pending`); a resubmission, already `processing`, marks it as before.
  const folded = lean && state.status === 'pending';
  let answer: SubmissionAnswer | undefined;
  for (;;) {
    try {
      answer = await bank.submitToBank({
        transferId,
        request,
        recipientName: transfer.recipientName,
        connector: transfer.connector,
        ...(transfer.nameEnquirySessionId !== undefined ? { sessionId: transfer.nameEnquirySessionId } : {}),
        ...(folded ? { markProcessing: true } : {}),
      });
    } catch (error) {
      const cause =
        error instanceof ActivityFailure && error.cause instanceof ApplicationFailure ? error.cause : undefined;
      if (cause?.type === 'bank_not_taken') {
        if (await passOn(request, transfer, state, refusedAtSubmission(cause), lean)) continue;
      } else if (cause?.type === 'bank_rejected') {
        // The provider holds it and will never pay it out (Paystack's `otp`): it fails, and stays there.
        state.bankOutcome ??= refusedAtSubmission(cause);
      } else {
        // Retries ran out without an answer that says anything (an hour of "not now", or faults of
        // our own): the bank may still have it, so its status is asked, and only its word (or an
        // operator's) decides; it is never sent again, here or elsewhere.
        await askAfterFailedSubmission(transfer, state);
      }
    }
    break;
  }
  if (answer?.status === 'possibly_taken') {
    state.possiblyTaken = answer.possiblyTaken;
  } else if (answer) {
    state.sessionId = answer.sessionId;
    if (answer.word) {
      // The bank's word reached the waiting submission: taken as the signal's would be, from the
      // connector that holds the transfer only (the callback sends no other's this way).
      if (foreignConnector(answer.word, state.connector) === undefined) state.bankOutcome ??= answer.word;
    } else if (answer.status !== 'pending') {
      state.bankOutcome ??= {
        status: answer.status,
        sessionId: answer.sessionId,
        providerCode: answer.providerCode,
        source: 'submission',
      };
    }
  }
  // The activity marked it with its answer; without one (a refusal, retries run out), this task does.
  if (!(folded && answer)) {
    await ledgerLocal.markProcessing({
      transferId,
      sessionId: state.sessionId ?? '',
      // The mark goes only when the bank's word settled the submission (an answer, a refusal, a status).
      taken: answer ? answer.status !== 'possibly_taken' : state.bankOutcome !== undefined,
    });
  }
  state.status = 'processing';
  upsertUnlessLean(lean, [{ key: TransferStatusKey, value: 'processing' }]);
}

/** A definitive refusal at submission as the bank's outcome: the transfer failed there. */
function refusedAtSubmission(cause: ApplicationFailure): BankOutcome {
  const providerCode = failureDetails(cause, cause.type as 'bank_rejected' | 'bank_not_taken')?.providerCode;
  return { status: 'failed', message: cause.message, source: 'submission', ...(providerCode ? { providerCode } : {}) };
}

/**
 * The transfer's connector did not take it: to the next connector of its mode whose name enquiry
 * answers (true: submit it there), or failed with the refusal when there is none (nothing was taken
 * anywhere). A transfer marked possibly taken meanwhile (an attempt still on its way) stays where it is.
 */
async function passOn(
  request: TransferRequest,
  transfer: Accepted,
  state: TransferState,
  refused: BankOutcome,
  lean = false,
): Promise<boolean> {
  const tried = (state.triedConnectors ??= []);
  if (!tried.includes(transfer.connector)) tried.push(transfer.connector);
  const next = await nextConnector(request, tried);
  if (!next) {
    state.bankOutcome ??= refused;
    return false;
  }
  const { transferId } = transfer;
  if (!(await ledger.assignConnector({ transferId, connector: next.connector, sessionId: next.sessionId }))) {
    state.possiblyTaken = {
      connector: transfer.connector,
      lastAttemptAt: Date.now(),
      kind: 'lost',
      reason: 'an attempt was still on its way when the transfer was to pass on',
    };
    return false;
  }
  log.warn('connector did not take the transfer; passing it to the next', {
    transferId,
    from: transfer.connector,
    to: next.connector,
    reason: refused.message,
  });
  transfer.connector = next.connector;
  transfer.recipientName = next.accountName;
  transfer.nameEnquirySessionId = next.sessionId;
  state.connector = next.connector;
  upsertUnlessLean(lean, [{ key: TransferConnectorKey, value: next.connector }]);
  return true;
}

/**
 * The connector's status query proved a possibly taken transfer was never taken (decisions §17):
 * an answer that was lost is sent again there, under the same reference; a refusal it made is now
 * proof, and the transfer passes to the next connector, or fails.
 */
async function afterNotTaken(
  request: TransferRequest,
  transfer: Accepted,
  state: TransferState,
  lean: boolean,
): Promise<void> {
  const held = state.possiblyTaken!;
  await ledgerLocal.clearPossiblyTaken({ transferId: transfer.transferId, lastAttemptAt: held.lastAttemptAt });
  state.possiblyTaken = undefined;
  log.warn('its connector has no such transfer, twice: it was never taken', {
    transferId: transfer.transferId,
    connector: held.connector,
    kind: held.kind,
    reason: held.reason,
  });
  if (held.kind === 'refused') {
    const refused: BankOutcome = { status: 'failed', message: held.reason, source: 'submission' };
    if (!(await passOn(request, transfer, state, refused, lean))) return;
  }
  await submit(request, transfer, state, lean);
}

/**
 * Phase 2 as runs started before the `possibly-taken` patch take it (kept while any may be open):
 * a definitive "not taken" passes the transfer on, another refusal fails it, and retries run out
 * into a status query.
 */
async function submitUnpinned(request: TransferRequest, transfer: Accepted, state: TransferState): Promise<void> {
  const { transferId } = transfer;
  const tried: string[] = [];
  let recipientName = transfer.recipientName;
  let enquirySession = transfer.nameEnquirySessionId;
  for (;;) {
    try {
      const submitted = await bank.submitToBank({
        transferId,
        request,
        recipientName,
        connector: transfer.connector,
        ...(enquirySession !== undefined ? { sessionId: enquirySession } : {}),
      });
      // Today's activity may answer that the bank may hold it: only its status query decides that.
      if (submitted.status !== 'possibly_taken') {
        state.sessionId = submitted.sessionId;
        if (submitted.status !== 'pending') {
          state.bankOutcome ??= {
            status: submitted.status,
            sessionId: submitted.sessionId,
            providerCode: submitted.providerCode,
            source: 'submission',
          };
        }
      }
    } catch (error) {
      const cause =
        error instanceof ActivityFailure && error.cause instanceof ApplicationFailure ? error.cause : undefined;
      const refused = cause?.type;
      if (cause && refused === 'bank_not_taken') {
        tried.push(transfer.connector);
        const next = await nextConnector(request, tried);
        if (next) {
          log.warn('connector did not take the transfer; passing it to the next', {
            transferId,
            from: transfer.connector,
            to: next.connector,
            reason: cause.message,
          });
          await ledger.assignConnector({ transferId, connector: next.connector, sessionId: next.sessionId });
          transfer.connector = next.connector;
          state.connector = next.connector;
          recipientName = next.accountName;
          enquirySession = next.sessionId;
          upsertSearchAttributes([{ key: TransferConnectorKey, value: next.connector }]);
          continue;
        }
      }
      if (cause && (refused === 'bank_rejected' || refused === 'bank_not_taken')) {
        // A definitive refusal: the bank will never pay this out.
        state.bankOutcome ??= refusedAtSubmission(cause);
      } else {
        await askAfterFailedSubmission(transfer, state);
      }
    }
    break;
  }
  await ledgerLocal.markProcessing({ transferId, sessionId: state.sessionId ?? '' });
  state.status = 'processing';
  upsertSearchAttributes([{ key: TransferStatusKey, value: 'processing' }]);
}

/**
 * The next connector of the transfer's mode whose name enquiry answers, none of `tried`; undefined
 * when there is none (or the account is unknown there), and the transfer then fails: nothing was
 * taken anywhere.
 */
async function nextConnector(
  request: TransferRequest,
  tried: string[],
): Promise<{ connector: string; accountName: string; sessionId: string } | undefined> {
  try {
    return await statusCheck.nameEnquiry({
      bankCode: request.recipientBankCode,
      accountNumber: request.recipientAccount,
      mode: request.mode,
      exclude: [...tried],
      // A saved recipient is paid under its saved name at the next connector too (decisions §20).
      ...(request.savedName !== undefined ? { savedName: request.savedName } : {}),
    });
  } catch (error) {
    log.warn('no other connector can take the transfer', { tried, error: String(error) });
    return undefined;
  }
}

/**
 * Retries ran out without a clear answer: the bank may still have it. Only the bank's definitive
 * answer decides; if even the status query fails, the transfer waits (and keeps asking) like any
 * unconfirmed one.
 */
async function askAfterFailedSubmission(transfer: Accepted, state: TransferState): Promise<void> {
  const { transferId, connector } = transfer;
  try {
    const known = await statusCheck.queryBankStatus({ transferId, connector });
    // "Unknown" (no such transfer) right after our last attempt is no proof: that attempt may
    // still reach the bank. Only the bank's definitive "failed" refunds; until then the transfer
    // stays processing and the bank is asked again on the usual schedule.
    if (known.status === 'successful' || known.status === 'failed') state.bankOutcome ??= known;
  } catch (error) {
    log.warn('bank unreachable after submission retries; waiting for its answer', { transferId, error: String(error) });
  }
}

/**
 * Phase 3, await: until the bank answers (signal or status query) or an operator resolves it (true),
 * or, for a possibly taken transfer, until its connector's status query has proved twice, after the
 * grace period, that it never took it (false). Flags the transfer stuck after 24 h; continues as new
 * when the history grows long.
 */
async function awaitOutcome(
  input: TransferWorkflowInput,
  transfer: Accepted,
  state: TransferState,
  waiting: { ms: number },
  lean: boolean,
): Promise<boolean> {
  const { transferId } = transfer;
  while (!state.bankOutcome && !state.resolution) {
    const interval = nextCheckMs(state, waiting.ms);
    const decided = () => state.bankOutcome !== undefined || state.resolution !== undefined;
    if (await (lean ? untilOrLapsed(decided, interval) : condition(decided, interval))) return true;
    waiting.ms += interval;
    state.statusChecks += 1;
    try {
      const known = await statusCheck.queryBankStatus({ transferId, connector: transfer.connector });
      if (known.status === 'successful' || known.status === 'failed') state.bankOutcome ??= known;
      else if (state.possiblyTaken && weighNotFound(state.possiblyTaken, known.status === 'unknown')) return false;
    } catch (error) {
      log.warn('bank status query failed; will ask again', { transferId, error: String(error) });
    }
    if (!state.bankOutcome && !state.resolution && !state.stuck && waiting.ms >= STUCK_AFTER_MS) {
      state.stuck = true;
      await ledger.flagStuck({ transferId });
      log.warn('transfer unconfirmed after 24 h: flagged as stuck for operators', { transferId });
    }
    if (!state.bankOutcome && !state.resolution && workflowInfo().continueAsNewSuggested) {
      // A word arriving meanwhile ends the wait, and this run finishes the transfer: a `resolve`
      // update (which waits for that, so would never let the handlers finish) or the bank's signal
      // (which the next run would not carry).
      await condition(() => allHandlersFinished() || state.resolution !== undefined);
      if (state.resolution || state.bankOutcome) return true;
      await continueAsNew<typeof transferWorkflow>({
        request: input.request,
        ...(lean ? { shape: 'lean' as const } : {}),
        resume: {
          transferId: transfer.transferId,
          recipientName: transfer.recipientName,
          connector: transfer.connector,
          sessionId: state.sessionId ?? '',
          waitedMs: waiting.ms,
          stuck: state.stuck,
          statusChecks: state.statusChecks,
          ...(state.possiblyTaken ? { possiblyTaken: state.possiblyTaken } : {}),
          ...(state.triedConnectors ? { triedConnectors: state.triedConnectors } : {}),
        },
      });
    }
  }
  return true;
}

/**
 * `condition(fn, timeout)` without cancelling the timer when `fn` comes true first (a cancel is a
 * history event; the run usually ends in the same task, and a timer that fires on a closed run
 * costs nothing). A later timer of the loop is a new one, so a lapsed one is never mistaken for it.
 */
async function untilOrLapsed(fn: () => boolean, timeoutMs: number): Promise<boolean> {
  return Promise.race([condition(fn).then(() => true), sleep(timeoutMs).then(() => false)]);
}

/**
 * When to ask the bank again: on the usual schedule, or sooner while a possibly taken transfer's
 * "not found" waits to count (the grace after its last ambiguous attempt) or to be confirmed.
 */
function nextCheckMs(state: TransferState, waitedMs: number): number {
  const usual = nextStatusCheckMs(state.statusChecks, waitedMs);
  const due = state.possiblyTaken?.recheckAt;
  return due === undefined ? usual : Math.min(usual, Math.max(due - Date.now(), 1_000));
}

/**
 * A possibly taken transfer's status answer weighed (decisions §17): "not found" counts no earlier
 * than NOT_FOUND_GRACE_MS after the last ambiguous attempt, and proves "never taken" (true) when a
 * second one NOT_FOUND_CONFIRM_MS or more later says it again; a transfer found starts the proof over.
 */
function weighNotFound(held: PossiblyTaken, notFound: boolean): boolean {
  const now = Date.now();
  if (!notFound) {
    delete held.notFoundAt;
    delete held.recheckAt;
    return false;
  }
  if (now - held.lastAttemptAt < NOT_FOUND_GRACE_MS) {
    held.recheckAt = held.lastAttemptAt + NOT_FOUND_GRACE_MS;
    return false;
  }
  if (held.notFoundAt === undefined) {
    held.notFoundAt = now;
    held.recheckAt = now + NOT_FOUND_CONFIRM_MS;
    return false;
  }
  if (now - held.notFoundAt >= NOT_FOUND_CONFIRM_MS) return true;
  held.recheckAt = held.notFoundAt + NOT_FOUND_CONFIRM_MS;
  return false;
}

/**
 * Phase 4, finish: the bank's own word wins over an operator's; an operator decides only when the
 * bank is silent. Settles or reverses once, then keeps a late answer that contradicts the books.
 */
async function finish(
  transferId: string,
  state: TransferState,
  onDecided: (decidedBy: ResolveResult['decidedBy']) => void,
  lean: boolean,
): Promise<void> {
  const outcome = state.bankOutcome;
  const resolution = outcome ? undefined : state.resolution;
  const succeeded = outcome ? outcome.status === 'successful' : resolution?.outcome === 'successful';
  // Lean runs settle in this very task, as a local activity (docs/workflows.md#the-lean-shape):
  // settling or reversing is idempotent under the transfer's row lock and answers what the books
  // hold, so an execution of this task that runs it again (its completion lost, a signal or update
  // come meanwhile) adopts the books' decision, whatever it would have decided itself.
  const finisher = lean ? ledgerLocal : ledger;
  let books: TransferRecord;
  if (succeeded) {
    books = await finisher.settleTransfer({
      transferId,
      outcome: outcome ?? {
        status: 'successful',
        source: 'callback',
        ...(state.sessionId ? { sessionId: state.sessionId } : {}),
      },
      ...(resolution ? { resolution } : {}),
    });
    state.status = 'completed';
  } else {
    books = await finisher.reverseTransfer({
      transferId,
      reason: outcome?.reversed
        ? 'reversed'
        : (outcome?.message ?? (resolution ? `resolved by operator: ${resolution.note}` : 'failed at the bank')),
      ...(outcome?.providerCode ? { providerCode: outcome.providerCode } : {}),
      ...(resolution ? { resolution } : {}),
    });
    state.status = 'failed';
  }
  // The books decided otherwise only when a lost execution of this task finished the transfer on
  // the other word (the operator's before the bank's came, or the reverse): that word decided it.
  const intended = state.status;
  if (lean && (books.status === 'completed' || books.status === 'failed')) state.status = books.status;
  const bankDecided = (outcome !== undefined) === (state.status === intended);
  // Answers a waiting `resolve` update before this run waits for its handlers to finish.
  onDecided(bankDecided ? 'bank' : 'operator');
  upsertUnlessLean(lean, [{ key: TransferStatusKey, value: state.status }]);
  await condition(allHandlersFinished);
  // The bank answered only while we settled or reversed on an operator's word, or is answering
  // now, before this run ends (a signal that lands after the last handler still reaches this line:
  // the run cannot complete over an unprocessed signal); or, in a lean run, the books were decided
  // on an operator's word by an execution of this task that was lost. If the bank says the
  // opposite, the books stand and its answer is kept for operators (decisions §12).
  const lateAnswer = state.bankOutcome;
  const disagrees = lateAnswer !== undefined && contradictsBooks(state.status, lateAnswer.status);
  if (disagrees && (lateAnswer !== outcome || state.status !== intended)) {
    await ledger.recordDiscrepancy({ transferId, bank: lateAnswer });
  }
}
