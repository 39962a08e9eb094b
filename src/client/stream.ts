// The event stream for tenants' code (decisions §15): `streamEvents` reads
// `GET /api/v1/events/stream` and yields each event as it comes, with its body exactly as sent (what
// a webhook receiver gets). A dropped connection is made again with `Last-Event-ID` set to the last
// event received, so a consumer sees every event once, in order, across drops and API restarts.
// Refusals that a retry cannot mend (a bad key, an unknown Last-Event-ID) end the walk with a
// GatewayClientError; a full house (429) or an API that is away is waited out.
import { createParser } from 'eventsource-parser';
import { GatewayClientError, errorOfResponse, networkError } from './errors.ts';
import type { WebhookEvent } from './webhooks.ts';

export interface StreamedEvent {
  /** The event id: give it as `after` to resume after this event. */
  id: string;
  type: string;
  /** The body as sent, byte for byte: `{id, type, created_at, data}`. */
  body: string;
  event: WebhookEvent;
}

export interface StreamEventsOptions {
  baseUrl: string;
  apiKey: string;
  /** Resume after this event id (one the stream sent before). */
  after?: string;
  signal?: AbortSignal;
  /** Told each time the connection is lost and about to be made again. */
  onReconnect?: (info: { after: string | undefined; attempt: number; reason: string }) => void;
  fetch?: typeof fetch;
}

const RETRYABLE = new Set([429, 500, 502, 503, 504]);

function sleep(ms: number, signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    signal?.addEventListener('abort', () => {
      clearTimeout(timer);
      resolve();
    });
  });
}

export async function* streamEvents(options: StreamEventsOptions): AsyncGenerator<StreamedEvent, void, undefined> {
  const doFetch = options.fetch ?? fetch;
  let after = options.after;
  for (let attempt = 0; !options.signal?.aborted; attempt++) {
    let reason: string;
    try {
      const response = await doFetch(`${options.baseUrl.replace(/\/$/, '')}/api/v1/events/stream`, {
        headers: {
          authorization: `Bearer ${options.apiKey}`,
          accept: 'text/event-stream',
          ...(after ? { 'last-event-id': after } : {}),
        },
        ...(options.signal ? { signal: options.signal } : {}),
      });
      if (!response.ok || !response.body) {
        const body = await response.json().catch(() => undefined);
        const error = errorOfResponse(response, body);
        if (!RETRYABLE.has(response.status)) throw new GatewayClientError(error);
        reason = `${response.status} ${error.message}`;
      } else {
        attempt = 0;
        const queue: StreamedEvent[] = [];
        const parser = createParser({
          onEvent: (message) => {
            if (!message.id) return;
            queue.push({
              id: message.id,
              type: message.event ?? 'message',
              body: message.data,
              event: JSON.parse(message.data) as WebhookEvent,
            });
          },
        });
        const decoder = new TextDecoder();
        for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
          parser.feed(decoder.decode(chunk, { stream: true }));
          while (queue.length > 0) {
            const next = queue.shift()!;
            after = next.id;
            yield next;
          }
        }
        reason = 'the gateway ended the stream';
      }
    } catch (error) {
      if (error instanceof GatewayClientError || options.signal?.aborted) {
        if (options.signal?.aborted) return;
        throw error;
      }
      reason = networkError(error).message;
    }
    options.onReconnect?.({ after, attempt: attempt + 1, reason });
    await sleep(Math.min(10_000, 500 * 2 ** attempt), options.signal);
  }
}
