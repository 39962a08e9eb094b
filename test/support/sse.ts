// A client of the event stream as a tenant's code reads it: fetch, and eventsource-parser over the
// body. Events are queued as they come; `take(n)` waits for the next n.
import { createParser } from 'eventsource-parser';

export interface StreamedMessage {
  id: string;
  event: string;
  data: Record<string, any>;
}

export interface StreamClient {
  status: number;
  /** The answer's body when it was refused (not an event stream). */
  refusal: Record<string, any> | undefined;
  headers: Headers;
  /** Every event received so far. */
  received: StreamedMessage[];
  /** Comment lines received (keep-alives). */
  comments: string[];
  /** The next `n` events not taken yet, waiting up to `timeoutMs` for them. */
  take(n: number, timeoutMs?: number): Promise<StreamedMessage[]>;
  /** Resolves when the server ends the stream. */
  ended: Promise<void>;
  /** Whether it has ended (`ended` has resolved). */
  readonly hasEnded: boolean;
  close(): void;
}

export async function openEventStream(
  baseUrl: string,
  apiKey: string,
  options: { lastEventId?: string; query?: string } = {},
): Promise<StreamClient> {
  const abort = new AbortController();
  const response = await fetch(`${baseUrl}/api/v1/events/stream${options.query ?? ''}`, {
    headers: {
      authorization: `Bearer ${apiKey}`,
      accept: 'text/event-stream',
      ...(options.lastEventId ? { 'last-event-id': options.lastEventId } : {}),
    },
    signal: abort.signal,
  });
  const received: StreamedMessage[] = [];
  const comments: string[] = [];
  let taken = 0;
  let wake: (() => void) | undefined;
  if (!response.headers.get('content-type')?.startsWith('text/event-stream')) {
    const refusal = (await response.json()) as Record<string, any>;
    return {
      status: response.status,
      refusal,
      headers: response.headers,
      received,
      comments,
      take: () => Promise.reject(new Error(`stream refused: ${response.status}`)),
      ended: Promise.resolve(),
      hasEnded: true,
      close: () => abort.abort(),
    };
  }
  const parser = createParser({
    onEvent: (message) => {
      received.push({ id: message.id!, event: message.event!, data: JSON.parse(message.data) as Record<string, any> });
      wake?.();
    },
    onComment: (comment) => comments.push(comment.trim()),
  });
  const ended = (async () => {
    const decoder = new TextDecoder();
    try {
      for await (const chunk of response.body! as AsyncIterable<Uint8Array>)
        parser.feed(decoder.decode(chunk, { stream: true }));
    } catch {
      // Aborted by close(), or the connection was cut: the stream has ended either way.
    }
    wake?.();
  })();
  let done = false;
  void ended.then(() => (done = true));
  return {
    status: response.status,
    refusal: undefined,
    headers: response.headers,
    received,
    comments,
    ended,
    get hasEnded() {
      return done;
    },
    close: () => abort.abort(),
    async take(n, timeoutMs = 20_000) {
      const deadline = Date.now() + timeoutMs;
      while (received.length < taken + n) {
        if (done) throw new Error(`stream ended after ${received.length} events, ${taken + n} awaited`);
        const left = deadline - Date.now();
        if (left <= 0) throw new Error(`${received.length - taken} of ${n} events within ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, Math.min(left, 1_000));
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
      }
      const next = received.slice(taken, taken + n);
      taken += n;
      return next;
    },
  };
}
