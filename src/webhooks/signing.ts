// The headers of the gateway's webhooks to tenants: Standard Webhooks (src/runtime/standard-webhooks.ts)
// keyed by the endpoint's secret (and, during a rotation's overlap, by the secret it replaced too:
// the new one's signature first), and the gateway's user agent.
import { signedHeaders } from '../runtime/standard-webhooks.ts';

export function webhookHeaders(
  secret: string | readonly string[],
  id: string,
  timestamp: number,
  body: string,
): Record<string, string> {
  return { ...signedHeaders(secret, id, timestamp, body), 'user-agent': 'naira-gateway-webhooks/1' };
}
