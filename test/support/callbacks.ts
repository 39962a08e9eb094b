// Provider callbacks as the sandbox bank sends them: a raw JSON body signed with the test secret.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { SIGNATURE_HEADER, signPayload } from '../../src/providers/signing.ts';
import { TEST_CALLBACK_SECRET } from './app.ts';

/** Posts the callback to the app, signed over the exact bytes sent. */
export function postSignedCallback(
  app: FastifyInstance,
  body: Record<string, unknown>,
): Promise<LightMyRequestResponse> {
  const raw = JSON.stringify(body);
  return app.inject({
    method: 'POST',
    url: '/provider-callbacks/sandbox-bank',
    headers: { 'content-type': 'application/json', [SIGNATURE_HEADER]: signPayload(TEST_CALLBACK_SECRET, raw) },
    payload: raw,
  });
}

/** The bank's notice of a 10,000-kobo credit to a Wema virtual account, under its own event id. */
export function creditCallback(eventId: string, accountNumber: string, transactionReference: string) {
  return {
    event_id: eventId,
    type: 'virtual_account.credit',
    data: {
      provider: 'wema',
      account_number: accountNumber,
      amount_minor: 10_000,
      currency: 'NGN',
      sender_name: 'X',
      transaction_reference: transactionReference,
      session_id: '1',
    },
  };
}
