// The sandbox bank: a separate HTTP service that speaks the generic HTTP bank contract
// (docs/generic-bank-contract-v1.yaml) as a Nigerian bank switch would (name enquiry, transfers,
// status query, settlement statement, BVN lookups, a card processor) and plays two virtual-account
// providers at `/providers/{wema|providus}` + the contract's virtual-account paths, with the magic
// recipient accounts of decisions §9. Every contract route needs `Authorization: Bearer
// <SANDBOX_BANK_API_KEY>`, and errors are the contract's `{code, message}`; transfer outcomes carry
// NIBSS NIP response codes as their `code`, as a NIP switch reports them. It calls the gateway
// back with Standard Webhooks callbacks, as a real bank does. Routes under /control let tests and
// operators steer it; with a control token (SANDBOX_BANK_CONTROL_TOKEN, required whenever the bank
// is reachable beyond loopback) each of them needs `Authorization: Bearer <token>` instead. Logged
// URLs show account numbers masked.
import { createHash, randomBytes, randomInt, timingSafeEqual } from 'node:crypto';
import Fastify, { type FastifyInstance, type FastifyReply } from 'fastify';
import { z } from 'zod';
import { type ZodTypeProvider, serializerCompiler, validatorCompiler } from 'fastify-type-provider-zod';
import {
  BvnLookupRequest,
  CONTRACT_PATHS,
  type ContractError,
  FundCardRequest,
  IssueCardRequest,
  NameEnquiryRequest,
  type SettlementStatementAnswer,
  TransferRequest,
  type TransferAnswer,
  VirtualAccountRequest,
  type VirtualAccountAnswer,
  type CardAuthorizationRequestData,
  callbackHeaders,
  fastifyPath,
} from '../connectors/generic/contract.ts';
import { maskLast4, maskUrl, maskedErrorSerializer } from '../runtime/log-masking.ts';
import { BANKS, accountNameFor, bankByCode } from './banks.ts';
import { type SandboxStore, type TransferRow, type VirtualAccountRow, newSessionId } from './store.ts';

/** NIP response codes the sandbox reports as a transfer's `code`. */
export const NIP = {
  success: '00',
  pending: '09',
  invalidAccount: '07',
  notFound: '25',
  notPermitted: '57',
  bankUnavailable: '91',
  systemMalfunction: '96',
} as const;

export const MAGIC_ACCOUNTS = {
  invalid: '0000000000',
  failsAfterAcceptance: '1111111111',
  neverConfirms: '2222222222',
  /** The first submission is taken, then answered 500: its answer is lost, and the status query finds it. */
  answerLost: '3333333333',
  /** Every submission answered 429 Too Many Requests: the bank never takes it (status: not found). */
  throttled: '4444444444',
  /**
   * Taken and completed as any other, then reversed by the bank REVERSAL_DELAY_MS (2 s) later: its
   * `transfer.reversed` callback, and the status query's `reversed` (contract v1.1, decisions §21).
   */
  reversesAfterSuccess: '5555555555',
  /**
   * The first submission hangs past the caller's timeout and is not taken (status: not found); a
   * later one is taken and completes.
   */
  timesOutUntaken: '6666666666',
} as const;

/** Virtual-account providers this bank plays, with their settlement bank and NUBAN serial base. */
export const VIRTUAL_ACCOUNT_PROVIDERS = {
  wema: { bankCode: '035', serialBase: 810_000_000 },
  providus: { bankCode: '101', serialBase: 950_000_000 },
} as const;
export type VirtualAccountProviderName = keyof typeof VIRTUAL_ACCOUNT_PROVIDERS;

/**
 * The BVN service's magic numbers (decisions §11): any other 11 digits belong to whoever the caller
 * names. The holder's name comes back upper-case, as BVN records keep it.
 */
export const MAGIC_BVNS = {
  matchesAnyName: '22222222222',
  notFound: '00000000000',
  neverMatches: '11111111111',
} as const;

export const PROVIDERS = ['nip', 'cards', 'bvn', ...Object.keys(VIRTUAL_ACCOUNT_PROVIDERS)] as const;

export interface SandboxBankOptions {
  store: SandboxStore;
  /** SANDBOX_BANK_API_KEY: every contract route needs `Authorization: Bearer <it>` (else 401). */
  apiKey: string;
  /** How long an ordinary transfer takes to complete. */
  completionDelayMs: number;
  /** How long 6666666666's first submission hangs before answering (callers time out first). */
  hangMs: number;
  /**
   * Told when background work falls due in `inMs` (a transfer accepted completes after
   * completionDelayMs; a control request's callbacks are due at once), so that the runner does it
   * then, not at its next poll (SandboxRunner.dueIn).
   */
  onDue?: (inMs: number) => void;
  logLevel?: string;
  /**
   * Where the card processor asks for authorization decisions (the gateway's provider-callback
   * URL) and the secret it signs them with. Without them, every purchase is declined `timeout`.
   */
  authorizationUrl?: string;
  callbackSecret?: string;
  /** How long the processor waits for a decision (2 s, as decided). */
  authorizationTimeoutMs?: number;
  /**
   * SANDBOX_BANK_CONTROL_TOKEN: every /control/* request must carry `Authorization: Bearer <it>`
   * (else 401). Unset: the control routes are open, which config allows only on loopback.
   */
  controlToken?: string;
}

/** Whether the request's `Authorization: Bearer …` is the token (or key), compared in constant time. */
export function carriesControlToken(header: string | undefined, token: string): boolean {
  const presented = /^Bearer\s+(\S+)\s*$/i.exec(header ?? '')?.[1] ?? '';
  // Digests of equal length: the comparison takes the same time whatever was sent, its length included.
  const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();
  return timingSafeEqual(digest(presented), digest(token)) && presented.length > 0;
}

const digits10 = z.string().regex(/^\d{10}$/, 'must be 10 digits');
const bankCode = z.string().refine((code) => bankByCode(code) !== undefined, 'is not a known bank code');

// The contract's requests, with this bank's own rules on top: it knows its bank codes, and takes a
// transfer without a narration (this switch starts its own session whatever the gateway passes on).
const NameEnquiryBody = NameEnquiryRequest.extend({ bank_code: bankCode });
const TransferBody = TransferRequest.extend({
  bank_code: bankCode,
  narration: TransferRequest.shape.narration.default(''),
});
// A credit's sender may name its account and bank (decisions §21), where a return of it goes. The
// bank takes a credit to a closed account too, as a real one does: the gateway decides what to do.
const CreditBody = z.object({
  amount_minor: z.number().int().positive(),
  sender_name: z.string().min(1).max(200).optional(),
  reference: z.string().min(1).max(100).optional(),
  sender_account_number: z
    .string()
    .regex(/^\d{10}$/)
    .optional(),
  sender_bank_code: bankCode.optional(),
});

const PurchaseBody = z.object({
  amount_minor: z.number().int().positive(),
  merchant_name: z.string().min(1).max(200),
  merchant_category: z.string().regex(/^\d{4}$/),
  channel: z.enum(['pos', 'web', 'atm']),
  authorization_id: z.string().min(1).max(100).optional(),
});

const isoDate = z.iso.date({ error: 'must be a date such as 2026-11-24' });

const ForgetBody = z.object({ reference: z.string().min(1).max(200) });
const AmendBody = z.object({ reference: z.string().min(1).max(200), amount_minor: z.number().int().positive() });
const InventBody = z.object({
  kind: z.enum(['transfer', 'inbound_credit']),
  date: isoDate.optional(),
  reference: z.string().min(1).max(200).optional(),
  session_id: z
    .string()
    .regex(/^\d{30}$/, 'must be 30 digits')
    .optional(),
  amount_minor: z.number().int().positive(),
  status: z.enum(['successful', 'failed']).default('successful'),
  provider: z.string().min(1).max(50).optional(),
  bank_code: z.string().min(1).max(10).optional(),
  account_number: digits10.default('0123456789'),
});

/** Today as a UTC date. */
function today(): string {
  return new Date().toISOString().slice(0, 10);
}

/** What each NIP code the sandbox reports on a transfer says. */
export const NIP_MESSAGES: Record<string, string> = {
  [NIP.success]: 'Approved or completed successfully',
  [NIP.pending]: 'Transaction in progress',
  [NIP.notPermitted]: 'Transaction not permitted to sender',
};

/** What the bank says of a transfer it reversed after its success (its NIP code stays the success's). */
export const REVERSED_MESSAGE = 'Reversed by the beneficiary bank';

/** A transfer as the contract reports it (the submission's answer and the status query's). */
function transferView(transfer: TransferRow): TransferAnswer {
  const { reference, status, session_id, response_code: code } = transfer;
  const message = status === 'reversed' ? REVERSED_MESSAGE : (NIP_MESSAGES[code] ?? null);
  return { reference, status, session_id, code, message };
}

function accountView(account: VirtualAccountRow): z.input<typeof VirtualAccountAnswer> {
  return {
    account_number: account.account_number,
    bank_code: account.bank_code,
    bank_name: bankByCode(account.bank_code)?.name ?? account.bank_code,
  };
}

/** The contract's error body. */
function refusal(code: string, message: string): ContractError {
  return { code, message };
}

function isProvider(name: string): name is VirtualAccountProviderName {
  return Object.hasOwn(VIRTUAL_ACCOUNT_PROVIDERS, name);
}

export async function buildSandboxBank(options: SandboxBankOptions): Promise<FastifyInstance> {
  const { store } = options;
  const server = Fastify({
    logger: {
      level: options.logLevel ?? 'info',
      base: { service: 'sandbox-bank' },
      // Fastify's request lines, with account numbers in the URL masked to their last 4 digits.
      serializers: {
        req: (request: { method: string; url: string; ip?: string }) => ({
          method: request.method,
          url: maskUrl(request.url),
          remoteAddress: request.ip,
        }),
        // A 500's error may quote an account number, as the gateway's may.
        err: maskedErrorSerializer,
      },
    },
  });
  server.setValidatorCompiler(validatorCompiler);
  server.setSerializerCompiler(serializerCompiler);
  const app = server.withTypeProvider<ZodTypeProvider>();
  app.setErrorHandler((error: { statusCode?: number; message: string }, request, reply) => {
    const status = error.statusCode && error.statusCode < 500 ? error.statusCode : 500;
    if (status >= 500) request.log.error({ err: error }, 'sandbox bank error');
    const code =
      status >= 500
        ? 'system_malfunction'
        : status === 400
          ? 'validation_error'
          : status === 404
            ? 'not_found'
            : 'bad_request';
    return reply.status(status).send(refusal(code, error.message));
  });
  // A path that is no route of the contract: a code of its own, never read as "no such transfer".
  app.setNotFoundHandler((request, reply) =>
    reply
      .status(404)
      .send(refusal('unknown_route', `no route ${request.method} ${maskUrl(request.url.split('?')[0] ?? '')}`)),
  );

  // The contract's routes take the API key; /control/* take the control token when one is set
  // (and are open to local callers otherwise); /health is open.
  const { apiKey, controlToken } = options;
  app.addHook('onRequest', async (request, reply) => {
    const route = request.routeOptions.url;
    if (route === '/health') return;
    const control = route?.startsWith('/control/') === true;
    if (control && !controlToken) return;
    if (carriesControlToken(request.headers.authorization, control ? controlToken! : apiKey)) return;
    return reply
      .status(401)
      .header('www-authenticate', 'Bearer')
      .send(
        refusal(
          'unauthorized',
          control
            ? 'control routes need Authorization: Bearer <SANDBOX_BANK_CONTROL_TOKEN>'
            : 'the bank needs Authorization: Bearer <SANDBOX_BANK_API_KEY>',
        ),
      );
  });

  // A control request that succeeded may have queued callbacks or made a transfer due: the runner
  // goes now rather than at its next poll.
  if (options.onDue) {
    const onDue = options.onDue;
    app.addHook('onResponse', async (request, reply) => {
      if (request.method === 'POST' && reply.statusCode < 300 && request.routeOptions.url?.startsWith('/control/'))
        onDue(0);
    });
  }

  async function unavailable(provider: string, reply: FastifyReply): Promise<boolean> {
    if (!(await store.isDown(provider))) return false;
    await reply.status(503).send(refusal('unavailable', `${provider} is unavailable`));
    return true;
  }

  app.get('/health', (_request, reply) => reply.send({ status: 'ok' }));
  app.get(CONTRACT_PATHS.banks, (_request, reply) =>
    reply.send({ banks: BANKS.map(({ code, name }) => ({ code, name })) }),
  );

  app.post(CONTRACT_PATHS.nameEnquiry, { schema: { body: NameEnquiryBody } }, async (request, reply) => {
    if (await unavailable('nip', reply)) return reply;
    const { account_number } = request.body;
    if (account_number === MAGIC_ACCOUNTS.invalid) {
      return reply.status(404).send(refusal('invalid_account', 'Invalid account'));
    }
    return { account_name: accountNameFor(account_number), session_id: newSessionId() };
  });

  // BVN lookup, as a BVN-match service answers it: the holder's names on record, or 404 not_found.
  app.post(CONTRACT_PATHS.bvnLookup, { schema: { body: BvnLookupRequest } }, async (request, reply) => {
    if (await unavailable('bvn', reply)) return reply;
    const { bvn, first_name, last_name } = request.body;
    if (bvn === MAGIC_BVNS.notFound) {
      return reply.status(404).send(refusal('not_found', 'BVN not found'));
    }
    const holder =
      bvn === MAGIC_BVNS.neverMatches
        ? // A name that differs from the caller's whatever it is.
          { first_name: `NOT ${first_name}`, last_name: `NOT ${last_name}` }
        : { first_name, last_name };
    return { first_name: holder.first_name.toUpperCase(), last_name: holder.last_name.toUpperCase() };
  });

  /** A repeat of a reference answers for its transfer: 202 while pending, 200 once final. */
  const transferAnswer = (reply: FastifyReply, transfer: TransferRow) =>
    reply.status(transfer.status === 'pending' ? 202 : 200).send(transferView(transfer));
  /** The same reference with another transfer's details: the contract's 409. */
  const sameTransfer = (transfer: TransferRow, body: z.infer<typeof TransferBody>) =>
    Number(transfer.amount_minor) === body.amount_minor &&
    transfer.bank_code === body.bank_code &&
    transfer.account_number === body.account_number;

  app.post(CONTRACT_PATHS.transfers, { schema: { body: TransferBody } }, async (request, reply) => {
    if (await unavailable('nip', reply)) return reply;
    const body = request.body;
    const existing = await store.findTransfer(body.reference);
    if (existing) {
      if (!sameTransfer(existing, body)) {
        return reply.status(409).send(refusal('conflict', `reference ${body.reference} was used for another transfer`));
      }
      return transferAnswer(reply, existing);
    }
    if (body.account_number === MAGIC_ACCOUNTS.invalid) {
      // Refused and not taken: the contract's 422.
      return reply.status(422).send(refusal('invalid_account', 'Invalid account'));
    }
    if (body.account_number === MAGIC_ACCOUNTS.throttled) {
      return reply
        .status(429)
        .header('retry-after', '1')
        .send(refusal('too_many_requests', 'Too many requests; try again later'));
    }
    if (body.account_number === MAGIC_ACCOUNTS.timesOutUntaken && (await store.countAttempt(body.reference)) === 1) {
      // Hang like a switch that never answers, and take nothing: the caller's timeout fires first.
      await new Promise((resolve) => setTimeout(resolve, options.hangMs));
      return reply.status(504).send(refusal('timeout', 'Timeout waiting for response from destination'));
    }
    const plannedOutcome =
      body.account_number === MAGIC_ACCOUNTS.failsAfterAcceptance
        ? 'failed'
        : body.account_number === MAGIC_ACCOUNTS.neverConfirms
          ? 'held'
          : body.account_number === MAGIC_ACCOUNTS.reversesAfterSuccess
            ? 'reversed'
            : 'successful';
    const { transfer } = await store.acceptTransfer(body, {
      outcome: plannedOutcome,
      completeInMs: options.completionDelayMs,
    });
    // Another request with this reference may have been first: the same rule as a repeat.
    if (!sameTransfer(transfer, body)) {
      return reply.status(409).send(refusal('conflict', `reference ${body.reference} was used for another transfer`));
    }
    if (plannedOutcome !== 'held') options.onDue?.(options.completionDelayMs);
    if (body.account_number === MAGIC_ACCOUNTS.answerLost) {
      // Taken, and then the answer goes wrong: the caller cannot tell this from a transfer never taken.
      return reply.status(500).send(refusal('system_malfunction', 'System malfunction'));
    }
    return transferAnswer(reply, transfer);
  });

  app.get<{ Params: { reference: string } }>(fastifyPath(CONTRACT_PATHS.transfer), async (request, reply) => {
    if (await unavailable('nip', reply)) return reply;
    const transfer = await store.findTransfer(request.params.reference);
    if (!transfer) return reply.status(404).send(refusal('not_found', 'Unable to locate record'));
    return transferView(transfer);
  });

  app.post(
    `/providers/:provider${CONTRACT_PATHS.virtualAccounts}`,
    { schema: { params: z.object({ provider: z.string() }), body: VirtualAccountRequest } },
    async (request, reply) => {
      const { provider } = request.params;
      if (!isProvider(provider))
        return reply.status(404).send(refusal('unknown_route', `unknown provider ${provider}`));
      if (await unavailable(provider, reply)) return reply;
      const account = await store.openVirtualAccount(provider, VIRTUAL_ACCOUNT_PROVIDERS[provider], request.body);
      return reply.status(201).send(accountView(account));
    },
  );

  app.post<{ Params: { provider: string; account_number: string }; Body: { reason?: string } | undefined }>(
    `/providers/:provider${fastifyPath(CONTRACT_PATHS.closeVirtualAccount)}`,
    async (request, reply) => {
      const { provider, account_number: accountNumber } = request.params;
      if (!isProvider(provider))
        return reply.status(404).send(refusal('unknown_route', `unknown provider ${provider}`));
      if (await unavailable(provider, reply)) return reply;
      const closed = await store.closeVirtualAccount(provider, accountNumber, request.body?.reason ?? null);
      if (!closed) return reply.status(404).send(refusal('not_found', 'Unable to locate record'));
      return { account_number: closed.account_number, status: closed.status };
    },
  );

  // ---- card processor ----

  app.post(CONTRACT_PATHS.cards, { schema: { body: IssueCardRequest } }, async (request, reply) => {
    if (await unavailable('cards', reply)) return reply;
    const card = await store.issueCard({
      cardReference: `crd_${randomBytes(8).toString('hex')}`,
      reference: request.body.reference,
      customerId: request.body.customer_id,
      last4: String(randomInt(0, 10_000)).padStart(4, '0'),
    });
    return reply.status(201).send(card);
  });

  for (const action of ['lock', 'unlock'] as const) {
    app.post(
      fastifyPath(action === 'lock' ? CONTRACT_PATHS.lockCard : CONTRACT_PATHS.unlockCard),
      { schema: { params: z.object({ card_reference: z.string() }) } },
      async (request, reply) => {
        if (await unavailable('cards', reply)) return reply;
        const card = await store.setCardLocked(request.params.card_reference, action === 'lock');
        if (!card) return reply.status(404).send(refusal('not_found', 'no such card'));
        return { card_reference: card.card_reference, status: card.locked ? 'locked' : 'active' };
      },
    );
  }

  app.post(
    fastifyPath(CONTRACT_PATHS.fundCard),
    { schema: { params: z.object({ card_reference: z.string() }), body: FundCardRequest } },
    async (request, reply) => {
      if (await unavailable('cards', reply)) return reply;
      const { card_reference: cardReference } = request.params;
      // A card steered by the control route below: its new loads answered unavailable, or refused.
      const steered = await store.loadSteering(cardReference, request.body.reference);
      if (steered && !steered.loaded && steered.load_answer === 'unavailable') {
        return reply.status(503).send(refusal('unavailable', 'card loads are unavailable'));
      }
      if (steered && !steered.loaded && steered.load_answer === 'refuse') {
        return reply.status(422).send(refusal('not_permitted', 'load not permitted on this card'));
      }
      // A repeat of the reference loads nothing more and answers the same.
      if (!(await store.fundCard(cardReference, request.body.reference, request.body.amount_minor))) {
        throw Object.assign(new Error('no such card'), { statusCode: 404 });
      }
      return { reference: request.body.reference, status: 'successful' };
    },
  );

  // ---- card purchases (the processor asks the gateway for each decision) ----

  // A purchase: the processor sends the gateway a signed authorization request through the
  // provider-callback path and waits at most 2 s. No answer in time (or no answer at all) declines
  // it `timeout`, and the processor then sends a reversal advice (through the callback outbox,
  // retried until the gateway takes it), as processors do, so a hold the gateway placed before it
  // died is released. Sent with a known authorization id, the request is repeated as a
  // processor's retry: a timed-out one keeps its `timeout`.
  app.post(
    '/control/cards/:cardReference/purchases',
    { schema: { params: z.object({ cardReference: z.string() }), body: PurchaseBody } },
    async (request, reply) => {
      const { cardReference } = request.params;
      const authorizationId = request.body.authorization_id ?? `auth_${randomBytes(12).toString('hex')}`;
      const purchase = { ...request.body, authorization_id: authorizationId };
      // Authorization ids are per card: the same id on another card is another purchase.
      const known = await store.recordAuthorization(cardReference, authorizationId, purchase);
      if (!known) {
        return reply
          .status(500)
          .send(refusal('system_malfunction', `authorization ${authorizationId} was not recorded`));
      }
      if (known.reason === 'timeout')
        return { authorization_id: authorizationId, decision: 'declined', reason: 'timeout' };
      const sent = known.request;
      const answer = await askGateway({
        id: `${authorizationId}:${randomBytes(4).toString('hex')}`,
        type: 'card.authorization.request',
        data: {
          authorization_id: authorizationId,
          card_reference: cardReference,
          amount_minor: sent.amount_minor,
          currency: 'NGN',
          merchant_name: sent.merchant_name,
          merchant_category: sent.merchant_category,
          channel: sent.channel,
        } satisfies CardAuthorizationRequestData,
      });
      const decision = answer ?? { decision: 'declined' as const, reason: 'timeout' };
      // Without the gateway's answer, the processor's reversal advice goes out with the decision.
      await store.decideAuthorization(cardReference, authorizationId, decision, { reverse: !answer });
      return { authorization_id: authorizationId, decision: decision.decision, reason: decision.reason };
    },
  );

  // The processor's clearing or reversal of one of its authorizations, which it names by card and
  // id (ids are per card). `card_reference` may be left out when the id is on one card only.
  const SettlementBody = z.object({
    card_reference: z.string().min(1).max(200).optional(),
    amount_minor: z.number().int().positive().optional(),
  });
  for (const action of ['clear', 'reverse'] as const) {
    app.post(
      `/control/card-authorizations/:authorizationId/${action}`,
      {
        schema: {
          params: z.object({ authorizationId: z.string().min(1).max(100) }),
          body:
            action === 'clear'
              ? SettlementBody.required({ amount_minor: true })
              : SettlementBody.omit({ amount_minor: true }).nullish(),
        },
      },
      async (request, reply) => {
        const { authorizationId } = request.params;
        const body = (request.body ?? {}) as z.infer<typeof SettlementBody>;
        let cardReference = body.card_reference;
        if (cardReference === undefined) {
          const cards = await store.authorizationCards(authorizationId);
          if (cards.length > 1) {
            return reply
              .status(409)
              .send(
                refusal(
                  'conflict',
                  `authorization ${authorizationId} is on several cards: name one with card_reference`,
                ),
              );
          }
          cardReference = cards[0];
        }
        const eventId = await store.transaction((client) =>
          store.queueCallback(
            client,
            action === 'clear' ? 'card.authorization.cleared' : 'card.authorization.reversed',
            {
              authorization_id: authorizationId,
              ...(cardReference !== undefined ? { card_reference: cardReference } : {}),
              ...(body.amount_minor !== undefined ? { amount_minor: body.amount_minor } : {}),
            },
          ),
        );
        return reply
          .status(202)
          .send({ authorization_id: authorizationId, card_reference: cardReference ?? null, event_id: eventId });
      },
    );
  }

  // Steers how the processor answers a card's new loads: `unavailable` (503, as when it is down, so
  // the gateway retries), `refuse` (422, code 57: refused for good), or `accept` (the default).
  app.post(
    '/control/cards/:cardReference/loads',
    {
      schema: {
        params: z.object({ cardReference: z.string() }),
        body: z.object({ answer: z.enum(['accept', 'unavailable', 'refuse']) }),
      },
    },
    async (request, reply) => {
      const loadAnswer = await store.setLoadAnswer(request.params.cardReference, request.body.answer);
      if (!loadAnswer) return reply.status(404).send({ message: `no card ${request.params.cardReference}` });
      return { card_reference: request.params.cardReference, load_answer: loadAnswer };
    },
  );

  /** The gateway's decision, or undefined when it gave none within the processor's time. */
  async function askGateway(payload: {
    id: string;
    type: 'card.authorization.request';
    data: CardAuthorizationRequestData;
  }): Promise<{ decision: 'approved' | 'declined'; reason: string | null } | undefined> {
    if (!options.authorizationUrl || !options.callbackSecret) return undefined;
    const body = JSON.stringify(payload);
    try {
      const response = await fetch(options.authorizationUrl, {
        method: 'POST',
        headers: callbackHeaders(options.callbackSecret, payload.id, body),
        body,
        signal: AbortSignal.timeout(options.authorizationTimeoutMs ?? 2_000),
      });
      if (!response.ok) return undefined;
      const answer = (await response.json()) as {
        data?: { authorization?: { decision?: string; reason?: string | null } };
      };
      const decided = answer.data?.authorization;
      if (decided?.decision !== 'approved' && decided?.decision !== 'declined') return undefined;
      return { decision: decided.decision, reason: decided.reason ?? null };
    } catch {
      return undefined;
    }
  }

  // ---- settlement statement ----

  // The day's settlement statement, as a bank's statement download: every transfer it settled or
  // failed and every inbound credit it received that UTC day, with session ids and amounts.
  app.get(
    fastifyPath(CONTRACT_PATHS.settlementStatement),
    { schema: { params: z.object({ date: isoDate }) } },
    async (request, reply) => {
      if (await unavailable('nip', reply)) return reply;
      const { date } = request.params;
      const items = await store.statement(date);
      return reply.header('content-disposition', `attachment; filename="settlement-${date}.json"`).send({
        date,
        generated_at: new Date().toISOString(),
        items: items.map((item) => ({
          kind: item.kind,
          reference: item.reference,
          session_id: item.session_id,
          amount_minor: item.amount_minor,
          status: item.status,
          provider: item.provider,
          account_number: item.account_number,
          value_time: item.value_time,
        })),
      } satisfies z.input<typeof SettlementStatementAnswer>);
    },
  );

  // ---- control routes (tests and operators) ----

  // Make the statement disagree with the bank's records, so that reconciliation has something to find.
  app.post('/control/statements/forget', { schema: { body: ForgetBody } }, async (request, reply) => {
    if (!(await store.knowsReference(request.body.reference))) {
      return reply.status(404).send({ message: `the bank has no transaction ${request.body.reference}` });
    }
    await store.adjustStatement({ action: 'forget', reference: request.body.reference });
    return { action: 'forget', reference: request.body.reference };
  });
  app.post('/control/statements/amend', { schema: { body: AmendBody } }, async (request, reply) => {
    if (!(await store.knowsReference(request.body.reference))) {
      return reply.status(404).send({ message: `the bank has no transaction ${request.body.reference}` });
    }
    await store.adjustStatement({
      action: 'amend',
      reference: request.body.reference,
      amountMinor: request.body.amount_minor,
    });
    return { action: 'amend', reference: request.body.reference, amount_minor: request.body.amount_minor };
  });
  app.post('/control/statements/invent', { schema: { body: InventBody } }, async (request, reply) => {
    const body = request.body;
    const reference = body.reference ?? `SBXINV${newSessionId().slice(-20)}`;
    const invented = {
      action: 'invent' as const,
      reference,
      kind: body.kind,
      valueDate: body.date ?? today(),
      sessionId: body.session_id ?? newSessionId(),
      amountMinor: body.amount_minor,
      status: body.status,
      provider: body.provider ?? null,
      bankCode: body.bank_code ?? null,
      accountNumber: body.account_number,
    };
    await store.adjustStatement(invented);
    return reply.status(201).send({
      action: 'invent',
      kind: invented.kind,
      date: invented.valueDate,
      reference,
      session_id: invented.sessionId,
      amount_minor: invented.amountMinor,
      status: invented.status,
      provider: invented.provider,
      account_number: invented.accountNumber,
    });
  });

  app.post<{ Params: { provider: string } }>('/control/providers/:provider/down', async (request, reply) => {
    if (!(PROVIDERS as readonly string[]).includes(request.params.provider))
      return reply.status(404).send({ message: 'unknown provider' });
    await store.setDown(request.params.provider, true);
    return { provider: request.params.provider, down: true };
  });
  app.post<{ Params: { provider: string } }>('/control/providers/:provider/up', async (request, reply) => {
    if (!(PROVIDERS as readonly string[]).includes(request.params.provider))
      return reply.status(404).send({ message: 'unknown provider' });
    await store.setDown(request.params.provider, false);
    return { provider: request.params.provider, down: false };
  });

  for (const [action, outcome, code, message] of [
    ['confirm', 'successful', NIP.success, NIP_MESSAGES[NIP.success]!],
    ['fail', 'failed', NIP.notPermitted, NIP_MESSAGES[NIP.notPermitted]!],
  ] as const) {
    app.post<{ Params: { reference: string } }>(`/control/transfers/:reference/${action}`, async (request, reply) => {
      const settled = await store.transaction((client) =>
        store.settleTransfer(client, request.params.reference, outcome, code, message),
      );
      if (settled) return { reference: settled.reference, status: outcome };
      const transfer = await store.findTransfer(request.params.reference);
      if (!transfer) return reply.status(404).send({ message: `no transfer ${request.params.reference}` });
      return reply.status(409).send({ message: `transfer is already ${transfer.status}` });
    });
  }

  // The bank reverses a transfer it completed (contract v1.1): `transfer.reversed` goes out, and its
  // status query says `reversed` from now on.
  app.post<{ Params: { reference: string } }>('/control/transfers/:reference/reverse', async (request, reply) => {
    const reversed = await store.transaction((client) =>
      store.reverseTransfer(client, request.params.reference, REVERSED_MESSAGE),
    );
    if (reversed) return { reference: reversed.reference, status: 'reversed' };
    const transfer = await store.findTransfer(request.params.reference);
    if (!transfer) return reply.status(404).send({ message: `no transfer ${request.params.reference}` });
    return reply.status(409).send({ message: `transfer is ${transfer.status}; only a successful one can be reversed` });
  });

  app.post(
    '/control/providers/:provider/virtual-accounts/:accountNumber/credits',
    { schema: { params: z.object({ provider: z.string(), accountNumber: z.string() }), body: CreditBody } },
    async (request, reply) => {
      const { provider, accountNumber } = request.params;
      const body = request.body;
      const account = await store.findVirtualAccount(provider, accountNumber);
      // The number shown by its last 4 only: the gateway may log this answer.
      if (!account) {
        return reply.status(404).send(refusal('not_found', `no ${provider} account ${maskLast4(accountNumber)}`));
      }
      // The bank's own transaction reference: derived from the sender's reference within this
      // account, so a repeat finds the same credit; random when the sender gave none.
      const transactionReference = body.reference
        ? `SBXCR${createHash('sha256').update(`${provider}:${accountNumber}:${body.reference}`).digest('hex').slice(0, 24).toUpperCase()}`
        : `SBXCR${newSessionId().slice(-20)}`;
      // A repeat sends the same notification again, as a real bank's duplicate does.
      const received = await store.receiveCredit({
        transactionReference,
        provider,
        accountNumber,
        amountMinor: body.amount_minor,
        senderName: body.sender_name ?? 'SANDBOX SENDER',
        clientReference: body.reference ?? null,
        senderAccountNumber: body.sender_account_number ?? null,
        senderBankCode: body.sender_bank_code ?? null,
      });
      const result = received && {
        transaction_reference: transactionReference,
        reference: body.reference ?? null,
        session_id: received.sessionId,
        event_id: received.eventId,
      };
      if (!result) {
        return reply
          .status(409)
          .send(
            refusal('conflict', `reference ${body.reference ?? ''} was already used for a credit of another amount`),
          );
      }
      return reply.status(202).send(result);
    },
  );

  return server;
}

// The contract's callback headers, which this bank's callbacks carry (and tests sign with).
export { callbackHeaders };
