// The failure a connector call must end in where a test expects the provider's refusal or fault.
import { expect } from 'vitest';
import { ProviderError } from '../../src/connectors/capabilities.ts';

/**
 * The ProviderError `promise` rejects with, for the test to read its outcome and code; the test
 * fails where the call answers instead (an answer would be a guess), or fails in another way.
 */
export async function providerError(promise: Promise<unknown>): Promise<ProviderError> {
  const outcome = await promise.then(
    (value: unknown) => ({ value }),
    (error: unknown) => ({ error }),
  );
  expect(outcome).not.toHaveProperty('value');
  const { error } = outcome as { error: unknown };
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}
