// The error a connector's call failed with, as the connector tests check it: a ProviderError,
// whose kind and message the test then asserts.
import { expect } from 'vitest';
import { ProviderError } from '../../src/providers/types.ts';

/** What `promise` was rejected with, checked to be a ProviderError (a call that succeeds fails the test). */
export async function providerError(promise: Promise<unknown>): Promise<ProviderError> {
  const error = await promise.then(
    () => undefined,
    (caught: unknown) => caught,
  );
  expect(error).toBeInstanceOf(ProviderError);
  return error as ProviderError;
}
