// `gateway listen --forward-to URL`: the tenant's events, read from the event stream, each POSTed to
// a local URL as the gateway's webhooks are (the same body and Standard Webhooks headers), signed
// with a secret made for this session and printed once, so that a receiver under development
// verifies them as it will verify real deliveries. One line per event with the receiver's answer;
// a dropped connection is resumed after the last event, so none is skipped or forwarded twice.
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { streamEvents } from '../stream.ts';

export interface ListenOptions {
  baseUrl: string;
  apiKey: string;
  forwardTo: string;
  /** Only these types (`*` or absent: all). */
  events: string[] | undefined;
  after: string | undefined;
  json: boolean;
  signal: AbortSignal;
  /** How long a forward may take (10 s). */
  timeoutMs?: number;
}

/** A Standard Webhooks secret: `whsec_` and 32 random bytes in base64. */
export function sessionSecret(): string {
  return `whsec_${randomBytes(32).toString('base64')}`;
}

function wanted(types: string[] | undefined, type: string): boolean {
  return !types || types.length === 0 || types.includes('*') || types.includes(type);
}

/** Forwards until the signal aborts; resolves then. Throws what the stream cannot get past (401, 400). */
export async function listen(options: ListenOptions): Promise<void> {
  const secret = sessionSecret();
  const signer = new Webhook(secret);
  const out = (line: string) => process.stdout.write(`${line}\n`);
  if (options.json) out(JSON.stringify({ ready: true, forward_to: options.forwardTo, signing_secret: secret }));
  else {
    out(`Ready. Forwarding events to ${options.forwardTo}`);
    out(`Webhook signing secret for this session (shown once): ${secret}`);
  }
  const events = streamEvents({
    baseUrl: options.baseUrl,
    apiKey: options.apiKey,
    ...(options.after ? { after: options.after } : {}),
    signal: options.signal,
    onReconnect: ({ after, reason }) =>
      process.stderr.write(`stream lost (${reason}); resuming after ${after ?? 'the start'}\n`),
  });
  for await (const { id, type, body } of events) {
    if (!wanted(options.events, type)) continue;
    const started = Date.now();
    const headers = {
      'content-type': 'application/json',
      'webhook-id': id,
      'webhook-timestamp': String(Math.floor(started / 1000)),
      'webhook-signature': signer.sign(id, new Date(started), body),
    };
    let answer: string;
    let status: number | null = null;
    try {
      const response = await fetch(options.forwardTo, {
        method: 'POST',
        headers,
        body,
        signal: AbortSignal.any([options.signal, AbortSignal.timeout(options.timeoutMs ?? 10_000)]),
        redirect: 'manual',
      });
      status = response.status;
      await response.body?.cancel();
      answer = String(response.status);
    } catch (error) {
      if (options.signal.aborted) return;
      answer = `error: ${(error as Error).cause instanceof Error ? ((error as Error).cause as Error).message : (error as Error).message}`;
    }
    const ms = Date.now() - started;
    if (options.json) out(JSON.stringify({ id, type, status, answer, ms }));
    else out(`${new Date(started).toISOString()}  ${type.padEnd(32)} ${id}  -> ${answer} (${ms} ms)`);
  }
}
