// How activities hand a provider's failure to Temporal: a definitive refusal becomes a
// non-retryable ApplicationFailure of the caller's type (with the provider's outcome and raw code),
// and a transient fault is rethrown as it is, for the activity's retry policy.
import { ApplicationFailure } from '@temporalio/common';
import { ProviderError } from '../src/providers/types.ts';

export function providerFailure(error: unknown, type: string): never {
  if (error instanceof ProviderError && !error.transient) {
    throw ApplicationFailure.create({
      type,
      message: error.message,
      nonRetryable: true,
      details: [{ outcome: error.outcome, providerCode: error.rawCode ?? null }],
      cause: error,
    });
  }
  throw error;
}
