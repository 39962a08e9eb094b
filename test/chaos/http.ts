// The chaos run's HTTP client: every answer is recorded under its operation (method and OpenAPI path
// template) with its status, and checked afterwards against the statuses /openapi.json documents
// for that operation. A request that got no answer (connection refused or reset while the API was
// killed, or no answer within the client's own bound) is counted apart, never as an answer.
// `until` retries one request with the same Idempotency-Key until it gets an answer that settles it.

export interface Answer {
  status: number;
  json: unknown;
  headers: Headers;
}

export class NoAnswer extends Error {
  readonly kind: 'connection' | 'timeout';
  constructor(kind: 'connection' | 'timeout', message: string) {
    super(message);
    this.kind = kind;
  }
}

export interface Recorder {
  /** `METHOD /path/{template}` → status → count. */
  answers: Map<string, Map<number, number>>;
  connectionErrors: number;
  timeouts: number;
  /** Answers the API gave that /openapi.json does not document for the operation (examples). */
  undocumented: { operation: string; status: number; body: string }[];
}

export function recorder(): Recorder {
  return { answers: new Map(), connectionErrors: 0, timeouts: 0, undocumented: [] };
}

/** The statuses /openapi.json documents, by `METHOD /path/{template}`. */
export async function documentedStatuses(apiUrl: string): Promise<Map<string, Set<number>>> {
  const response = await fetch(`${apiUrl}/openapi.json`, { signal: AbortSignal.timeout(30_000) });
  const document = (await response.json()) as { paths: Record<string, Record<string, { responses?: object }>> };
  const documented = new Map<string, Set<number>>();
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations)) {
      const statuses = Object.keys(operation.responses ?? {}).map(Number);
      documented.set(`${method.toUpperCase()} ${path}`, new Set(statuses));
    }
  }
  return documented;
}

export interface RequestSpec {
  method: 'GET' | 'POST' | 'PUT' | 'PATCH';
  /** The OpenAPI path template, e.g. `/api/v1/cards/{card_id}/lock`. */
  template: string;
  /** The template's parameters. */
  params?: Record<string, string>;
  query?: Record<string, string | number>;
  body?: unknown;
  idempotencyKey?: string;
}

export class Client {
  readonly apiUrl: string;
  readonly record: Recorder;
  readonly documented: Map<string, Set<number>>;
  constructor(apiUrl: string, record: Recorder, documented: Map<string, Set<number>>) {
    this.apiUrl = apiUrl;
    this.record = record;
    this.documented = documented;
  }

  /** One request; its answer, or NoAnswer. */
  async send(key: string, spec: RequestSpec, timeoutMs = 60_000): Promise<Answer> {
    let path = spec.template;
    for (const [name, value] of Object.entries(spec.params ?? {})) {
      path = path.replace(`{${name}}`, encodeURIComponent(value));
    }
    const query = new URLSearchParams(
      Object.entries(spec.query ?? {}).map(([name, value]): [string, string] => [name, String(value)]),
    );
    const url = `${this.apiUrl}${path}${query.size ? `?${query.toString()}` : ''}`;
    const headers: Record<string, string> = { authorization: `Bearer ${key}` };
    if (spec.body !== undefined) headers['content-type'] = 'application/json';
    if (spec.idempotencyKey) headers['idempotency-key'] = spec.idempotencyKey;
    let response: Response;
    let text: string;
    try {
      response = await fetch(url, {
        method: spec.method,
        headers,
        ...(spec.body !== undefined ? { body: JSON.stringify(spec.body) } : {}),
        signal: AbortSignal.timeout(timeoutMs),
      });
      text = await response.text();
    } catch (error) {
      if (error instanceof Error && (error.name === 'TimeoutError' || error.name === 'AbortError')) {
        this.record.timeouts += 1;
        throw new NoAnswer('timeout', `${spec.method} ${path}: no answer within ${timeoutMs} ms`);
      }
      this.record.connectionErrors += 1;
      const cause = error instanceof Error && error.cause instanceof Error ? error.cause.message : String(error);
      throw new NoAnswer('connection', `${spec.method} ${path}: ${cause}`);
    }
    const operation = `${spec.method} ${spec.template}`;
    const byStatus = this.record.answers.get(operation) ?? new Map<number, number>();
    byStatus.set(response.status, (byStatus.get(response.status) ?? 0) + 1);
    this.record.answers.set(operation, byStatus);
    if (!this.documented.get(operation)?.has(response.status) && this.record.undocumented.length < 50) {
      this.record.undocumented.push({ operation, status: response.status, body: text.slice(0, 300) });
    }
    let json: unknown;
    try {
      json = text ? JSON.parse(text) : undefined;
    } catch {
      json = text;
    }
    return { status: response.status, json, headers: response.headers };
  }

  /**
   * Sends the same request (same Idempotency-Key, same body) until it gets an answer that is not
   * "come back later" (no answer at all, 503, 429, 409 idempotency_key_in_use), within `deadlineMs`.
   * Returns the settling answer and how many tries went unanswered; undefined past the deadline.
   */
  async until(
    key: string,
    spec: RequestSpec,
    deadlineMs: number,
    stopped: () => boolean,
  ): Promise<{ answer: Answer | undefined; lost: number; tries: number }> {
    const deadline = Date.now() + deadlineMs;
    let lost = 0;
    let tries = 0;
    let wait = 200;
    while (Date.now() < deadline && !stopped()) {
      tries += 1;
      try {
        const answer = await this.send(key, spec, Math.max(1_000, Math.min(60_000, deadline - Date.now())));
        if (!comeBackLater(answer)) return { answer, lost, tries };
      } catch (error) {
        if (!(error instanceof NoAnswer)) throw error;
        lost += 1;
      }
      // The client's retry policy: back off (up to 2 s) before the same request again.
      await new Promise((resolve) => setTimeout(resolve, wait));
      wait = Math.min(2_000, wait * 2);
    }
    return { answer: undefined, lost, tries };
  }
}

function comeBackLater(answer: Answer): boolean {
  if (answer.status === 503 || answer.status === 429) return true;
  if (answer.status === 409) {
    const code = errorCode(answer.json);
    return code === 'idempotency_key_in_use' || code === 'IDEMPOTENCY_KEY_IN_USE';
  }
  return false;
}

/** The error code of either envelope. */
export function errorCode(json: unknown): string | undefined {
  const error = (json as { error?: unknown } | undefined)?.error;
  if (error && typeof error === 'object' && 'code' in error) return String(error.code);
  return undefined;
}
