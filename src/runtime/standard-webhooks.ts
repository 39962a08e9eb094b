// Standard Webhooks signatures (https://www.standardwebhooks.com): headers `webhook-id`,
// `webhook-timestamp` (Unix seconds) and `webhook-signature: v1,<base64 HMAC-SHA256(key,
// "{id}.{timestamp}.{body}")>`. The key is the base64 part of a `whsec_…` secret, otherwise the
// secret's UTF-8 bytes. One scheme for every process that signs: the gateway's webhooks to tenants
// (src/webhooks/signing.ts) and a bank's callbacks under the generic contract
// (src/connectors/generic/contract.ts). The `standardwebhooks` library verifies these unchanged (tested).
import { createHmac } from 'node:crypto';

export function signingKey(secret: string): Buffer {
  return secret.startsWith('whsec_')
    ? Buffer.from(secret.slice('whsec_'.length), 'base64')
    : Buffer.from(secret, 'utf8');
}

export function signWebhook(secret: string, id: string, timestamp: number, body: string): string {
  const digest = createHmac('sha256', signingKey(secret)).update(`${id}.${timestamp}.${body}`).digest('base64');
  return `v1,${digest}`;
}

/**
 * The headers of a signed JSON POST of exactly `body`. Several secrets (a rotation's overlap) give
 * one `v1,…` signature each, space-separated, as Standard Webhooks allows: a receiver holding
 * any one of them verifies the request.
 */
export function signedHeaders(
  secret: string | readonly string[],
  id: string,
  timestamp: number,
  body: string,
): Record<string, string> {
  const secrets = typeof secret === 'string' ? [secret] : secret;
  return {
    'content-type': 'application/json',
    'webhook-id': id,
    'webhook-timestamp': String(timestamp),
    'webhook-signature': secrets.map((one) => signWebhook(one, id, timestamp, body)).join(' '),
  };
}
