// The test bank's HTTP side: the generic bank contract v1 (decisions §13) and the /control/*
// routes, on plain node:http so that a fault can be exactly what a network does (a hang, a reset,
// an answer lost after the work is done). Every call needs `Authorization: Bearer <api key>`,
// control calls included. Errors are `{code, message}`: 400 validation_error for a body the
// contract does not allow, 401 unauthorized, 404 for what the bank does not know, 409 for a
// reference reused with another body, 422 for a transfer refused and not taken.
import { createHash, timingSafeEqual } from 'node:crypto';
import { type IncomingMessage, type Server, type ServerResponse, createServer } from 'node:http';
import type { Socket } from 'node:net';
import { z } from 'zod';
import { CONTRACT_PATHS, type ContractError } from '../../../src/connectors/generic/contract.ts';
import { INSTITUTIONS, institution } from './banks.ts';
import { type Bank, CODES, accountView, transferView } from './bank.ts';
import type { Faults, Submission } from './faults.ts';

/** Bodies larger than this are refused (413), as the gateway bounds its own. */
const BODY_LIMIT_BYTES = 64 * 1024;

export interface BankServerOptions {
  bank: Bank;
  faults: Faults;
  apiKey: string;
  log: (line: string) => void;
}

type Answer = { status: number; body: unknown } | { lost: true };

class Refusal extends Error {
  readonly status: number;
  readonly code: string;
  constructor(status: number, code: string, message: string) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

const noNul = (value: string) => !value.includes('\u0000');
const text = (max: number) => z.string().min(1).max(max).refine(noNul, 'must not contain NUL');
const digits10 = z.string().regex(/^\d{10}$/, 'must be 10 digits');
const bankCode = z.string().refine((code) => institution(code) !== undefined, 'is not a bank code this bank lists');
const amountMinor = z.number().int('must be an integer (kobo)').min(1).max(100_000_000_000);

const NameEnquiryBody = z.object({ bank_code: bankCode, account_number: digits10 });
const TransferBody = z.object({
  reference: text(200),
  amount_minor: amountMinor,
  currency: z.literal('NGN'),
  bank_code: bankCode,
  account_number: digits10,
  account_name: text(200),
  narration: z.string().max(200).refine(noNul, 'must not contain NUL'),
  // The name enquiry's session, when the gateway has one (the contract makes it optional).
  session_id: text(100).optional(),
});
const VirtualAccountBody = z.object({
  reference: text(200),
  account_name: text(200),
  customer_id: text(200),
  // The rule is named, the value never repeated back.
  bvn: z
    .string()
    .regex(/^\d{11}$/, 'must be 11 digits')
    .optional(),
  preferred_bank: text(100).optional(),
});
const CreditBody = z.object({
  amount_minor: amountMinor,
  sender_name: text(200).optional(),
  reference: text(200).optional(),
  sender_account_number: digits10.optional(),
  sender_bank_code: bankCode.optional(),
});
const SettleBody = z.object({ code: text(10).optional(), message: text(200).optional() });
const ReverseBody = z.object({ message: text(200).optional() });
const CallbackModeBody = z.object({ mode: z.enum(['deliver', 'drop']) });
const FaultBody = z
  .object({
    fault: z.enum(['503', 'html', 'hang', 'reset', 'limit_422', 'lose_answer']),
    count: z.number().int().min(1).max(1000).default(1),
    route: text(200).optional(),
    // Kept to some submissions: repeats of a reference offered before, or (a lost answer only)
    // those the bank took; an edge fault answers before the bank knows whether it would take it.
    only: z.enum(['repeats', 'taken']).optional(),
  })
  .refine((plan) => plan.only !== 'taken' || plan.fault === 'lose_answer', {
    message: "only: 'taken' is for lose_answer (an edge fault answers before the bank takes anything)",
    path: ['only'],
  });
const isoDate = z.iso.date({ error: 'must be a date such as 2026-11-24' });

function parse<T>(schema: z.ZodType<T>, body: unknown): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const message = parsed.error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : 'body'}: ${issue.message}`)
    .join('; ');
  throw new Refusal(400, 'validation_error', message);
}

/** Whether `Authorization: Bearer …` (scheme in any case) carries the key, compared in constant time. */
function carriesKey(header: string | undefined, key: string): boolean {
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1] ?? '';
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(presented), digest(key)) && presented.length > 0;
}

type Handler = (params: string[], body: () => unknown) => Answer;

/** A contract path as a pattern over the request's path, each `{parameter}` one captured segment. */
function contractPattern(path: string): RegExp {
  return new RegExp(`^${path.replace(/\{\w+\}/g, '([^/]+)')}$`);
}

export function createBankServer(options: BankServerOptions): { server: Server; sockets: Set<Socket> } {
  const { bank, faults } = options;
  const ok = (status: number, body: unknown): Answer => ({ status, body });

  const routes: { method: string; pattern: RegExp; handle: Handler }[] = [
    {
      method: 'GET',
      pattern: contractPattern(CONTRACT_PATHS.banks),
      handle: () => ok(200, { banks: INSTITUTIONS.map(({ code, name }) => ({ code, name })) }),
    },
    {
      method: 'POST',
      pattern: contractPattern(CONTRACT_PATHS.nameEnquiry),
      handle: (_params, body) => {
        const { bank_code, account_number } = parse(NameEnquiryBody, body());
        const found = bank.nameEnquiry(bank_code, account_number);
        if (!found) throw new Refusal(404, 'invalid_account', 'Invalid account: no such account at that bank');
        return ok(200, found);
      },
    },
    {
      method: 'POST',
      pattern: contractPattern(CONTRACT_PATHS.transfers),
      handle: (_params, body) => {
        const request = parse(TransferBody, body());
        const result = bank.submit(request);
        if ('conflict' in result) {
          throw new Refusal(
            409,
            'duplicate_reference',
            `reference ${request.reference} was already used for another transfer`,
          );
        }
        if (!result.taken) throw new Refusal(result.status, result.code, result.message);
        if (result.lost) throw new Refusal(result.lost.status, result.lost.code, result.lost.message);
        const { transfer } = result;
        return transfer.status === 'pending'
          ? ok(202, { reference: transfer.request.reference, status: 'pending' })
          : ok(200, transferView(transfer));
      },
    },
    {
      method: 'GET',
      pattern: contractPattern(CONTRACT_PATHS.transfer),
      handle: ([reference]) => {
        const transfer = bank.transfers.get(reference!);
        if (!transfer) throw new Refusal(404, 'not_found', 'The bank never took a transfer with this reference');
        return ok(200, transferView(transfer));
      },
    },
    {
      method: 'POST',
      pattern: contractPattern(CONTRACT_PATHS.virtualAccounts),
      handle: (_params, body) => ok(201, accountView(bank.openAccount(parse(VirtualAccountBody, body())))),
    },
    {
      method: 'POST',
      pattern: contractPattern(CONTRACT_PATHS.closeVirtualAccount),
      handle: ([accountNumber]) => {
        const account = bank.closeAccount(accountNumber!);
        if (!account) throw new Refusal(404, 'not_found', 'No virtual account with this number');
        return ok(200, { ...accountView(account), status: account.status });
      },
    },
    {
      method: 'GET',
      pattern: contractPattern(CONTRACT_PATHS.settlementStatement),
      handle: ([date]) => {
        const { date: day } = parse(z.object({ date: isoDate }), { date });
        return ok(200, { date: day, generated_at: bank.settings.now().toISOString(), items: bank.statement(day) });
      },
    },

    // ---- control ----
    {
      method: 'POST',
      pattern: /^\/control\/virtual-accounts\/([^/]+)\/credits$/,
      handle: ([accountNumber], body) => {
        const result = bank.credit(accountNumber!, parse(CreditBody, body()));
        if (result === 'no_account') throw new Refusal(404, 'not_found', 'No virtual account with this number');
        if (result === 'closed') throw new Refusal(409, 'account_closed', 'The virtual account is closed');
        if (result === 'conflict') {
          throw new Refusal(
            409,
            'duplicate_reference',
            'This reference was already used for a credit of another amount',
          );
        }
        return ok(202, {
          transaction_reference: result.credit.transactionReference,
          reference: result.credit.senderReference,
          session_id: result.credit.sessionId,
          amount_minor: result.credit.amountMinor,
          callback_id: result.callbackId,
        });
      },
    },
    ...(['complete', 'fail'] as const).map((action) => ({
      method: 'POST',
      pattern: new RegExp(`^/control/transfers/([^/]+)/${action}$`),
      handle: ([reference]: string[], body: () => unknown): Answer => {
        const given = parse(SettleBody, body() ?? {});
        const status = action === 'complete' ? 'successful' : 'failed';
        const fallback = action === 'complete' ? CODES.successful : CODES.notPermitted;
        const settled = bank.settle(reference!, status, {
          code: given.code ?? fallback.code,
          message: given.message ?? fallback.message,
        });
        if (settled === 'unknown')
          throw new Refusal(404, 'not_found', 'The bank never took a transfer with this reference');
        if (settled === 'final') {
          throw new Refusal(409, 'already_final', `The transfer is already ${bank.transfers.get(reference!)!.status}`);
        }
        return ok(200, transferView(bank.transfers.get(reference!)!));
      },
    })),
    {
      // The bank reverses a transfer it completed (contract v1.1): `transfer.reversed`, then status `reversed`.
      method: 'POST',
      pattern: /^\/control\/transfers\/([^/]+)\/reverse$/,
      handle: ([reference]: string[], body: () => unknown): Answer => {
        const given = parse(ReverseBody, body() ?? {});
        const reversed = bank.reverse(reference!, given.message ?? 'Reversed by the beneficiary bank');
        if (reversed === 'unknown')
          throw new Refusal(404, 'not_found', 'The bank never took a transfer with this reference');
        if (reversed === 'not_successful') {
          throw new Refusal(
            409,
            'not_successful',
            `The transfer is ${bank.transfers.get(reference!)!.status}; only a successful one can be reversed`,
          );
        }
        return ok(200, transferView(bank.transfers.get(reference!)!));
      },
    },
    {
      method: 'GET',
      pattern: /^\/control\/callbacks$/,
      handle: () =>
        ok(200, {
          mode: bank.callbackMode,
          callbacks: [...bank.callbacks.values()].map((callback) => ({
            id: callback.id,
            type: callback.type,
            state: callback.state,
            attempts: callback.attempts,
            last_error: callback.lastError,
            data: callback.data,
          })),
        }),
    },
    {
      method: 'POST',
      pattern: /^\/control\/callbacks$/,
      handle: (_params, body) => {
        bank.setCallbackMode(parse(CallbackModeBody, body()).mode);
        return ok(200, { mode: bank.callbackMode });
      },
    },
    {
      method: 'GET',
      pattern: /^\/control\/faults$/,
      handle: () => ok(200, { faults: faults.plans }),
    },
    {
      method: 'POST',
      pattern: /^\/control\/faults$/,
      handle: (_params, body) => {
        const planned = parse(FaultBody, body());
        faults.plan(planned.fault, planned.count, planned.route ?? null, planned.only);
        return ok(200, { faults: faults.plans });
      },
    },
    {
      method: 'GET',
      pattern: /^\/control\/faults\/met$/,
      handle: () => ok(200, { met: faults.met }),
    },
    {
      method: 'DELETE',
      pattern: /^\/control\/faults$/,
      handle: () => {
        faults.clear();
        return ok(200, { faults: faults.plans });
      },
    },
  ];

  function respond(
    response: ServerResponse,
    status: number,
    body: unknown,
    headers: Record<string, string> = {},
  ): void {
    const payload = JSON.stringify(body);
    response.writeHead(status, {
      'content-type': 'application/json; charset=utf-8',
      'content-length': String(Buffer.byteLength(payload)),
      ...headers,
    });
    response.end(payload);
  }

  function route(method: string, path: string, raw: string): Answer {
    let pathMatched = false;
    for (const candidate of routes) {
      const found = candidate.pattern.exec(path);
      if (!found) continue;
      pathMatched = true;
      if (candidate.method !== method) continue;
      let params: string[];
      try {
        params = found.slice(1).map((segment) => decodeURIComponent(segment));
      } catch {
        throw new Refusal(400, 'validation_error', 'path: bad percent-encoding');
      }
      if (params.some((param) => !noNul(param)))
        throw new Refusal(400, 'validation_error', 'path: must not contain NUL');
      const body = () => {
        if (raw.trim() === '') return undefined;
        try {
          return JSON.parse(raw) as unknown;
        } catch {
          throw new Refusal(400, 'invalid_json', 'The body is not valid JSON');
        }
      };
      return candidate.handle(params, body);
    }
    if (pathMatched) throw new Refusal(405, 'method_not_allowed', `${method} is not allowed here`);
    throw new Refusal(404, 'not_found', `No route ${method} ${path}`);
  }

  function handle(request: IncomingMessage, response: ServerResponse, raw: string, tooLarge: boolean): void {
    const method = request.method ?? 'GET';
    // The path as sent, query cut off (a URL parser would read `//host/x` as another host's `/x`).
    const path = (request.url ?? '/').split('?')[0]!;
    const control = path.startsWith('/control/');
    const submission = method === 'POST' && path === CONTRACT_PATHS.transfers ? submissionIn(raw) : undefined;
    if (!control) {
      switch (faults.atEdge(method, path, submission)) {
        case '503':
          return respond(
            response,
            503,
            { code: 'unavailable', message: 'Service temporarily unavailable' },
            { 'retry-after': '1' },
          );
        case 'html':
          response.writeHead(502, { 'content-type': 'text/html' });
          response.end('<html><head><title>502 Bad Gateway</title></head><body><h1>502 Bad Gateway</h1></body></html>');
          return;
        case 'hang':
          return; // never answered: the caller's timeout ends it, or the bank's stop does
        case 'reset':
          request.socket.resetAndDestroy();
          return;
        case 'limit_422':
          return respond(response, 422, {
            code: 'limit_exceeded',
            message: 'Daily limit exceeded for this account; the transfer was not taken',
          });
        case undefined:
          break;
      }
    }
    if (!carriesKey(request.headers.authorization, options.apiKey)) {
      return respond(
        response,
        401,
        { code: 'unauthorized', message: 'Authorization: Bearer <api key> is missing or wrong' },
        { 'www-authenticate': 'Bearer' },
      );
    }
    if (tooLarge)
      return respond(response, 413, { code: 'too_large', message: `bodies are at most ${BODY_LIMIT_BYTES} bytes` });
    let answer: Answer;
    try {
      answer = route(method, path, raw);
    } catch (error) {
      if (!(error instanceof Refusal)) {
        options.log(
          `error on ${method} ${path}: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
        );
      }
      answer =
        error instanceof Refusal
          ? { status: error.status, body: { code: error.code, message: error.message } satisfies ContractError }
          : { status: 500, body: { code: 'internal_error', message: 'The bank failed to process the request' } };
    }
    // The work is done (and journaled) whatever the answer was; only the answer is lost.
    if (
      method === 'POST' &&
      path === CONTRACT_PATHS.transfers &&
      faults.losesAnswer(submission && { ...submission, taken: bank.transfers.has(submission.reference) })
    )
      answer = { lost: true };
    if ('lost' in answer) {
      request.socket.destroy();
      return;
    }
    respond(response, answer.status, answer.body);
  }

  /**
   * A submission's reference, read from its body before anything else (a fault at the edge may
   * answer first), and whether the bank was offered it before; undefined for a body without one.
   */
  function submissionIn(raw: string): Submission | undefined {
    let reference: unknown;
    try {
      reference = (JSON.parse(raw) as { reference?: unknown } | null)?.reference;
    } catch {
      return undefined;
    }
    return typeof reference === 'string' ? { reference, repeat: bank.offers.has(reference) } : undefined;
  }

  const sockets = new Set<Socket>();
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size <= BODY_LIMIT_BYTES) chunks.push(chunk);
    });
    request.on('end', () => handle(request, response, Buffer.concat(chunks).toString('utf8'), size > BODY_LIMIT_BYTES));
    request.on('error', () => request.socket.destroy());
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  server.on('clientError', (_error, socket) => {
    if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nconnection: close\r\n\r\n');
    else socket.destroy();
  });
  return { server, sockets };
}
