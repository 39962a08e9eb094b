// POSTs a webhook to addresses already checked by the SSRF guard, never looking the host name up
// again (a name that resolves to a public address for the check and to an internal one for the
// request — DNS rebinding — cannot slip through). Redirects are not followed. With an egress
// proxy (WEBHOOK_PROXY_URL), the request goes through it instead — CONNECT for https, an
// absolute-form request for http — and the proxy resolves the name and makes the final check.
import http from 'node:http';
import https from 'node:https';
import { HttpProxyAgent } from 'http-proxy-agent';
import { HttpsProxyAgent } from 'https-proxy-agent';
import type { LookupFunction } from 'node:net';
import { isIPv6 } from 'node:net';

export interface PinnedResponse {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: string;
}

const BODY_READ_LIMIT = 64 * 1024;

export function pinnedLookup(addresses: string[]): LookupFunction {
  return (_hostname, options, callback) => {
    const entries = addresses.map((address) => ({ address, family: isIPv6(address) ? 6 : 4 }));
    if ((options as { all?: boolean }).all) {
      (callback as unknown as (error: null, all: typeof entries) => void)(null, entries);
    } else {
      callback(null, entries[0]!.address, entries[0]!.family);
    }
  };
}

export function postPinned(
  url: URL,
  addresses: string[],
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
  proxy?: URL,
): Promise<PinnedResponse> {
  const client = url.protocol === 'https:' ? https : http;
  const route = proxy
    ? { agent: url.protocol === 'https:' ? new HttpsProxyAgent(proxy) : new HttpProxyAgent(proxy) }
    : { lookup: pinnedLookup(addresses) };
  return new Promise((resolve, reject) => {
    const request = client.request(
      url,
      {
        method: 'POST',
        headers: { ...headers, 'content-length': Buffer.byteLength(body) },
        ...route,
        signal: AbortSignal.timeout(timeoutMs),
      },
      (response) => {
        const chunks: Buffer[] = [];
        let size = 0;
        response.on('data', (chunk: Buffer) => {
          if (size < BODY_READ_LIMIT) chunks.push(chunk);
          size += chunk.length;
        });
        response.on('end', () =>
          resolve({
            status: response.statusCode ?? 0,
            headers: response.headers,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
        response.on('error', reject);
      },
    );
    request.on('error', reject);
    request.end(body);
  });
}
