// The one place where provider response codes become our outcomes. NIBSS NIP codes, as the
// sandbox bank (and real switches) answer them.
import type { BankTransferStatus, ProviderOutcome } from './types.ts';

export type CodeMeaning =
  | { kind: 'status'; status: BankTransferStatus }
  | { kind: 'error'; outcome: ProviderOutcome; transient: boolean; description: string };

export const NIP_CODES: Record<string, CodeMeaning> = {
  '00': { kind: 'status', status: 'successful' },
  '09': { kind: 'status', status: 'pending' },
  '01': { kind: 'status', status: 'pending' }, // status unknown: query again later
  '07': { kind: 'error', outcome: 'invalid_account', transient: false, description: 'invalid account' },
  '25': { kind: 'error', outcome: 'not_found', transient: false, description: 'unable to locate record' },
  '51': { kind: 'error', outcome: 'transfer_failed', transient: false, description: 'insufficient funds at the bank' },
  '57': { kind: 'error', outcome: 'transfer_failed', transient: false, description: 'transaction not permitted' },
  '91': { kind: 'error', outcome: 'unavailable', transient: true, description: 'beneficiary bank not available' },
  '96': { kind: 'error', outcome: 'unavailable', transient: true, description: 'system malfunction' },
  '97': { kind: 'error', outcome: 'timeout', transient: true, description: 'timeout waiting for the destination' },
};

/** Codes we have never seen are treated as "status unknown": transient, so the status is queried again. */
export function meaningOf(code: string | undefined): CodeMeaning {
  return (
    (code !== undefined ? NIP_CODES[code] : undefined) ?? {
      kind: 'error',
      outcome: 'unknown',
      transient: true,
      description: `unrecognised response code ${code ?? '(none)'}`,
    }
  );
}

/** A final transfer status from a code found on a settled transfer ('failed' for any definitive error). */
export function transferStatusOf(code: string): BankTransferStatus | undefined {
  const meaning = meaningOf(code);
  if (meaning.kind === 'status') return meaning.status;
  return meaning.transient ? undefined : 'failed';
}
