// What every answer must be, whatever was sent: never a 5xx; a status the document declares for
// the operation; a body that matches the declared schema for that status (validated by Ajv, the
// same JSON Schema dialect as the document); errors in the envelope of the route's area
// (decisions §1 — resource style `{error:{code, message, details}, meta:{path, method, requestId}}`,
// transfer style `{success:false, error:{code, message, status, details?}}`) with a code of the
// error table for that status; the request id in the header and, for the resource style, in `meta`.
import { Ajv2020, type ValidateFunction } from 'ajv/dist/2020.js';
import type { FastifyInstance, LightMyRequestResponse } from 'fastify';
import { ERRORS, envelopeStyleFor } from '../../src/http/errors.ts';
import type { Operation } from '../support/openapi.ts';
import type { FuzzRequest } from './requests.ts';

export interface Answer {
  status: number;
  headers: Record<string, string | string[] | number | undefined>;
  body: string;
}

/** Sends `request` to the app; no answer within `withinMs` is a hang, and throws. */
export async function answerOf(app: FastifyInstance, request: FuzzRequest, withinMs: number): Promise<Answer> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_resolve, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${withinMs} ms`)), withinMs);
  });
  try {
    const response: LightMyRequestResponse = await Promise.race([
      app.inject({
        method: request.method as 'GET',
        url: request.url,
        headers: request.headers,
        ...(request.payload !== undefined ? { payload: request.payload } : {}),
      }),
      deadline,
    ]);
    return { status: response.statusCode, headers: response.headers, body: response.body };
  } finally {
    clearTimeout(timer);
  }
}

/** Whether the operation answers a stream (text/event-stream) that never ends on its own. */
export function isStreamOperation(operation: Operation): boolean {
  return Object.values(operation.spec.responses ?? {}).some(
    (answer) => (answer as { content?: Record<string, unknown> }).content?.['text/event-stream'] !== undefined,
  );
}

/**
 * The answer of a streaming operation, over HTTP: its status and headers, and for a refusal its
 * body; an accepted stream is read up to its first comment, then closed (the server forgets it).
 */
export async function streamAnswerOf(baseUrl: string, request: FuzzRequest, withinMs: number): Promise<Answer> {
  const abort = new AbortController();
  const timer = setTimeout(() => abort.abort(new Error(`no answer within ${withinMs} ms`)), withinMs);
  try {
    const response = await fetch(`${baseUrl}${request.url}`, {
      method: request.method,
      headers: request.headers,
      ...(request.payload !== undefined ? { body: request.payload } : {}),
      signal: abort.signal,
    });
    const headers = Object.fromEntries(response.headers);
    if (!String(headers['content-type'] ?? '').startsWith('text/event-stream')) {
      return { status: response.status, headers, body: await response.text() };
    }
    const reader = response.body!.getReader();
    const first = await reader.read();
    const opening = new TextDecoder().decode(first.value);
    await reader.cancel();
    if (!opening.startsWith(': stream open')) throw new Error(`the stream opened with ${JSON.stringify(opening)}`);
    return { status: response.status, headers, body: '' };
  } finally {
    clearTimeout(timer);
    abort.abort();
  }
}

const ajv = new Ajv2020({ strict: false, allErrors: true, validateFormats: false });
const validators = new Map<object, ValidateFunction>();

function validatorFor(schema: object): ValidateFunction {
  let validate = validators.get(schema);
  if (!validate) {
    validate = ajv.compile(schema);
    validators.set(schema, validate);
  }
  return validate;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The faults of `answer` to `request` on `operation`; empty when it is as the document says. */
export function faultsOf(operation: Operation, request: FuzzRequest, answer: Answer): string[] {
  const faults: string[] = [];
  const { status } = answer;
  if (status >= 500) faults.push(`answered ${status}`);
  const declared = operation.spec.responses?.[String(status)];
  if (!declared) {
    faults.push(
      `status ${status} is not declared (declared: ${Object.keys(operation.spec.responses ?? {}).join(', ')})`,
    );
  }
  const requestId = answer.headers['x-request-id'];
  if (typeof requestId !== 'string' || !REQUEST_ID.test(requestId))
    faults.push(`x-request-id header is ${String(requestId)}`);
  const sentId = request.headers['x-request-id'];
  const echoes = sentId !== undefined && REQUEST_ID.test(sentId);
  if (echoes && requestId !== sentId) faults.push(`x-request-id ${String(requestId)} is not the one sent (${sentId})`);

  if (/\n\s+at |FST_[A-Z_]+/.test(answer.body)) faults.push('the body shows a stack trace or a framework error code');
  const schema = declared?.content?.['application/json']?.schema;
  if (!schema) {
    if (declared && answer.body !== '') faults.push('a body where the document declares none');
    return faults;
  }
  const type = String(answer.headers['content-type'] ?? '');
  if (!type.startsWith('application/json')) faults.push(`content-type ${type}`);
  let body: unknown;
  try {
    body = JSON.parse(answer.body);
  } catch {
    faults.push('the body is not JSON');
    return faults;
  }
  const validate = validatorFor(schema);
  if (!validate(body)) {
    faults.push(
      `the body does not match the declared ${status} schema: ${ajv.errorsText(validate.errors, { separator: '; ' })}`,
    );
  }
  faults.push(...envelopeFaults(operation, request, status, body, String(requestId)));
  return faults;
}

function envelopeFaults(operation: Operation, request: FuzzRequest, status: number, body: unknown, requestId: string) {
  const faults: string[] = [];
  const envelope = body as {
    success?: unknown;
    status?: unknown;
    error?: { code?: unknown; status?: unknown };
    meta?: { requestId?: unknown; method?: unknown; path?: unknown };
  };
  // The area's style; where the document allows the other one too (a transfer route's 400 from the
  // router), the schema check above has let it through, and the body says which one it is.
  const areaStyle = envelopeStyleFor(operation.template);
  const style = areaStyle === 'transfer' && status >= 400 && envelope.success === undefined ? 'resource' : areaStyle;
  if (status >= 400) {
    const codes = Object.values(ERRORS)
      .filter((entry) => entry.status === status)
      .map((entry) => (style === 'transfer' ? entry.transfer : entry.resource));
    if (!codes.includes(envelope.error?.code as never)) {
      faults.push(`error code ${String(envelope.error?.code)} is not one of ${codes.join(', ')} for ${status}`);
    }
    if (style === 'transfer') {
      if (envelope.success !== false) faults.push('a transfer-style error without success:false');
      if (envelope.error?.status !== status) faults.push(`error.status ${String(envelope.error?.status)}`);
    } else {
      if (envelope.meta?.method !== request.method) faults.push(`meta.method ${String(envelope.meta?.method)}`);
      if (envelope.meta?.path !== request.url.split('?')[0]) faults.push(`meta.path ${String(envelope.meta?.path)}`);
    }
  }
  // The resource style carries the request id in meta, success or error (health answers have no meta).
  const hasMeta = status >= 400 || envelope.meta !== undefined;
  if (style === 'resource' && hasMeta && envelope.meta?.requestId !== requestId) {
    faults.push(`meta.requestId ${String(envelope.meta?.requestId)} is not the x-request-id ${requestId}`);
  }
  return faults;
}
