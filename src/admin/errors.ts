// How an operator command ends when it does not succeed, and the one mapping of that ending to the
// CLI's exit code, audit outcome and message. A usage error is the operator's typing (a flag
// missing or malformed: exit 2); a refusal is the gateway declining what was asked of data that
// is (no such transfer, a hold already released: exit 1); anything else is a failure (exit 1).
import { Refusal } from '../lib/refusal.ts';

/** A flag missing, unknown or malformed: nothing was looked at. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Refusals of the commands' own; features that refuse operators in their modules add theirs. */
export type RefusalCode =
  | 'not_found'
  /** The thing is not in the status the command needs (an account not active, a hold not pending…). */
  | 'wrong_status'
  /** The transfer is already completed or failed: nothing to resolve. */
  | 'already_final'
  /** The transfer's workflow has not created its transfer yet. */
  | 'no_transfer_yet'
  /** The transfer already holds an operator's resolution of the other outcome. */
  | 'already_resolved'
  /** No worker answered within the wait: the request may still be applied once one runs. */
  | 'no_answer';

/**
 * The gateway declines what an operator asked, and changed nothing; the message says why. Features
 * whose use cases refuse operators raise their own Refusal subclasses (TenantError, DiscrepancyError).
 */
export class OperatorRefusal extends Refusal<RefusalCode> {
  override readonly name = 'OperatorRefusal';
}

export type AuditOutcome = 'succeeded' | 'refused' | 'failed';

export interface Ending {
  exitCode: number;
  /** As admin_audit records it: `refused` is a usage error; a refusal by the gateway is `failed`. */
  outcome: Exclude<AuditOutcome, 'succeeded'>;
  /** What admin_audit keeps of it. */
  message: string;
  /** The stderr line. */
  line: string;
}

/** The one place a command's error becomes its exit code, audit outcome and message. */
export function endingOf(command: string, error: unknown): Ending {
  const message = error instanceof Error ? error.message : String(error);
  if (error instanceof UsageError) return { exitCode: 2, outcome: 'refused', message, line: `${command}: ${message}` };
  if (error instanceof Refusal) {
    return { exitCode: 1, outcome: 'failed', message, line: `${command} refused (${error.code}): ${message}` };
  }
  return { exitCode: 1, outcome: 'failed', message, line: `${command} failed: ${message}` };
}
