// Provider callbacks as the sandbox bank sends them (the generic contract): a raw JSON body
// `{id, type, data}` signed as Standard Webhooks with the test secret.
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import type { MikroORM } from '../../src/orm.ts';
import { signWebhook } from '../../src/runtime/standard-webhooks.ts';
import { TEST_CALLBACK_SECRET } from './app.ts';
import { eventually } from './eventually.ts';

/** Standard Webhooks headers for `raw`, signed with `secret` at `timestamp` (now by default). */
export function callbackHeaders(
  id: string,
  raw: string,
  options: { secret?: string; timestamp?: number } = {},
): Record<string, string> {
  const timestamp = options.timestamp ?? Math.floor(Date.now() / 1000);
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': signWebhook(options.secret ?? TEST_CALLBACK_SECRET, id, timestamp, raw),
  };
}

/** Posts the callback to the app as the sandbox bank does, signed over the exact bytes sent. */
export function postSignedCallback(
  app: FastifyInstance,
  body: { id: string; type: string; data: Record<string, unknown> },
  remoteAddress?: string,
): Promise<LightMyRequestResponse> {
  const raw = JSON.stringify(body);
  return app.inject({
    method: 'POST',
    url: '/provider-callbacks/sandbox',
    headers: callbackHeaders(body.id, raw),
    payload: raw,
    ...(remoteAddress ? { remoteAddress } : {}),
  });
}

/** The bank's notice of a 10,000-kobo credit to a Wema virtual account, under its own event id. */
export function creditCallback(eventId: string, accountNumber: string, transactionReference: string) {
  return {
    id: eventId,
    type: 'virtual_account.credited',
    data: {
      account_number: accountNumber,
      amount_minor: 10_000,
      transaction_reference: transactionReference,
      sender_name: 'X',
      session_id: '1',
      provider: 'wema',
    },
  };
}

/**
 * What became of a credit notice: the status and refusal reason of the inbound credit recorded for
 * a virtual account, or under the bank's transaction reference, once one is recorded.
 */
export function inboundCreditOutcome(
  orm: MikroORM,
  by: 'virtual_account_id' | 'transaction_reference',
  value: string,
): Promise<{ status: string; refusal_reason: string }> {
  return eventually(async () => {
    const [row] = await orm.em
      .fork()
      .execute<{ status: string; refusal_reason: string }[]>(
        `select status, refusal_reason from inbound_credits where ${by} = ?`,
        [value],
      );
    return row;
  });
}
