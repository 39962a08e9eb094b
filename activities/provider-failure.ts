// How activities hand a provider's failure to Temporal: a definitive refusal becomes a
// non-retryable ApplicationFailure of the caller's type (with the provider's outcome and raw code),
// and a transient fault is rethrown as it is, for the activity's retry policy.
import { ApplicationFailure } from '@temporalio/common';
import { ProviderError } from '../src/connectors/capabilities.ts';

export function providerFailure(error: unknown, type: string): never {
  if (isDefinitive(error)) {
    throw ApplicationFailure.create({
      type,
      message: error.message,
      nonRetryable: true,
      details: [refusalDetails(error)],
      cause: error,
    });
  }
  throw error;
}

/** A provider's refusal that retrying cannot change. */
export function isDefinitive(error: unknown): error is ProviderError {
  return error instanceof ProviderError && !error.transient;
}

/** What a definitive refusal's failure carries: the provider's outcome and raw code. */
export function refusalDetails(error: ProviderError): { outcome: string; providerCode: string | null } {
  return { outcome: error.outcome, providerCode: error.rawCode ?? null };
}
