// Requests as a tenant's client makes them through `inject`: the bearer header, the bodies many
// files send (a transfer, a card, a webhook endpoint), and the shape of a validation refusal.
// Kept here so that a change to the API's contract is made in one place, not in every file.
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { expect } from 'vitest';
import { eventually } from './eventually.ts';

/** The headers of a request made with the tenant's key, plus any others. */
export const auth = (apiKey: string, extra: Record<string, string> = {}) => ({
  authorization: `Bearer ${apiKey}`,
  ...extra,
});

/** A Standard Webhooks signing secret (`whsec_` and 32 random bytes), fresh for each endpoint. */
export const newSigningSecret = () => `whsec_${randomBytes(32).toString('base64')}`;

/**
 * A valid transfer body: 100,000 kobo to 0123456789 at Guaranty Trust Bank (058), an account the
 * sandbox bank pays. `fields` add to it or override it (a reference, another amount, metadata).
 */
export function transferBody<T extends Record<string, unknown>>(narration: string, fields: T) {
  return {
    amount_minor: 100_000,
    recipient_account: '0123456789',
    recipient_bank_code: '058',
    narration,
    ...fields,
  };
}

/** Issues a card to a customer of the tenant; the answer, for the test to check. */
export function issueCard(app: FastifyInstance, apiKey: string, customerId = 'c'): Promise<LightMyRequestResponse> {
  return app.inject({
    method: 'POST',
    url: '/api/v1/cards',
    headers: auth(apiKey),
    payload: { customer_id: customerId },
  });
}

/** Registers a webhook endpoint for the tenant; the answer, for the test to check. */
export function registerEndpoint(
  app: FastifyInstance,
  apiKey: string,
  body: Record<string, unknown>,
  url = '/api/v1/webhook-endpoints',
): Promise<LightMyRequestResponse> {
  return app.inject({ method: 'POST', url, headers: auth(apiKey), payload: body });
}

/** The paths a validation refusal names in `error.details.fields`, in the order it names them. */
export function fieldPaths(response: LightMyRequestResponse): string[] {
  return response.json().error.details.fields.map((field: { path: string }) => field.path);
}

/**
 * A 400 with `code` that names `field` among the bad fields. The field is part of the compared
 * status, so that a failure in a table of cases says which case it was.
 */
export function expectFieldRefused(response: LightMyRequestResponse, field: string, code = 'VALIDATION_ERROR') {
  expect({ field, status: response.statusCode }).toEqual({ field, status: 400 });
  expect(response.json().error.code).toBe(code);
  expect(fieldPaths(response)).toContain(field);
}

/** The endpoint's first delivery as the tenant lists it, once it has had an attempt (waiting for that). */
export function firstAttemptedDelivery(app: FastifyInstance, apiKey: string, endpointId: string) {
  return eventually(async () => {
    const list = await app.inject({
      method: 'GET',
      url: `/api/v1/webhook-deliveries?endpoint_id=${endpointId}`,
      headers: auth(apiKey),
    });
    const [delivery] = list.json().data.items;
    return delivery?.attempts.length >= 1 ? delivery : undefined;
  });
}

/**
 * One request over HTTP to a gateway that runs as processes, with the tenant's key, and how long
 * its answer took (ms, unrounded): what the flood tests time a create by.
 */
export async function timedCall(baseUrl: string, key: string, method: string, path: string, body?: unknown) {
  const started = performance.now();
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { ...auth(key), ...(body ? { 'content-type': 'application/json' } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await response.text();
  return {
    status: response.status,
    ms: performance.now() - started,
    headers: response.headers,
    json: text ? (JSON.parse(text) as Record<string, any>) : {},
  };
}
