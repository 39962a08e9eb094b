// The headers of the gateway's webhooks to tenants: Standard Webhooks (src/runtime/standard-webhooks.ts)
// keyed by the endpoint's secret, and the gateway's user agent.
import { signedHeaders } from '../runtime/standard-webhooks.ts';

export function webhookHeaders(secret: string, id: string, timestamp: number, body: string): Record<string, string> {
  return { ...signedHeaders(secret, id, timestamp, body), 'user-agent': 'naira-gateway-webhooks/1' };
}
