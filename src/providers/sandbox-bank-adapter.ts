// HTTP adapters for the sandbox bank, exactly as the gateway would talk to a real switch or
// provider: every call has a timeout; network errors, timeouts, 5xx, 408, 425 and 429 are
// transient; a 4xx refusal is definitive only when its response code says so. Response codes are
// mapped through src/providers/codes.ts, and the raw code is kept on errors. With tracing on,
// each call is a client span named by its method and route (`POST /nip/transfers`).
import { z } from 'zod';
import { withHttpClientSpan } from '../telemetry/http-client-span.ts';
import { TRANSIENT_HTTP_STATUSES, meaningOf, submissionRefusal } from './codes.ts';
import {
  type AllocateVirtualAccountInput,
  type AllocatedVirtualAccount,
  type Bank,
  type BankSwitch,
  type NameEnquiryResult,
  ProviderError,
  type SubmitTransferInput,
  type TransferStatusResult,
  type VirtualAccountProvider,
  type CardProcessor,
  type SettlementReport,
  type SimulatedPurchase,
  type ProcessorDecision,
  type BvnHolder,
  type IdentityVerifier,
} from './types.ts';

export interface SandboxHttpOptions {
  baseUrl: string;
  timeoutMs: number;
  /** SANDBOX_BANK_CONTROL_TOKEN: sent as `Authorization: Bearer …` on the bank's /control/* routes. */
  controlToken?: string | undefined;
}

/** The fields the sandbox bank's answers carry (each route uses some of them). */
interface BankAnswer {
  response_code?: string;
  message?: string;
  status?: string;
  session_id?: string;
  account_name?: string;
  account_number?: string;
  bank_code?: string;
  bank_name?: string;
  provider_reference?: string;
  banks?: Bank[];
  transaction_reference?: string;
  card_reference?: string;
  last4?: string;
  statement?: unknown;
  first_name?: string;
  last_name?: string;
}

/** The statement as the bank sends it: checked field by field, since reconciliation trusts nothing it reads. */
const StatementAnswer = z.object({
  date: z.string(),
  generated_at: z.string(),
  items: z.array(
    z.object({
      kind: z.enum(['transfer', 'inbound_credit']),
      reference: z.string().min(1),
      session_id: z.string(),
      amount_minor: z.number().int().positive(),
      status: z.enum(['successful', 'failed']),
      provider: z.string().nullable(),
      account_number: z.string(),
      value_time: z.string(),
    }),
  ),
});

/** A path with the route it was made from: spans are named by the route, never by an id in the path. */
interface RoutedPath {
  route: string;
  path: string;
}

/** `/nip/transfers/{reference}` with its parameters filled in, encoded. */
function routed(route: string, params: Record<string, string>): RoutedPath {
  return { route, path: route.replace(/\{(\w+)\}/g, (_, name: string) => encodeURIComponent(params[name] ?? '')) };
}

async function call(
  provider: string,
  options: SandboxHttpOptions,
  method: 'GET' | 'POST',
  target: string | RoutedPath,
  body?: unknown,
): Promise<{ status: number; answer: BankAnswer }> {
  const { route, path } = typeof target === 'string' ? { route: target, path: target } : target;
  let response: Response;
  try {
    const url = new URL(`${options.baseUrl}${path}`);
    response = await withHttpClientSpan(
      `${method} ${route}`,
      { method, url, attributes: { 'http.route': route, 'gateway.provider': provider } },
      () =>
        fetch(url, {
          method,
          headers: {
            ...(body === undefined ? {} : { 'content-type': 'application/json' }),
            ...(options.controlToken && route.startsWith('/control/')
              ? { authorization: `Bearer ${options.controlToken}` }
              : {}),
          },
          body: body === undefined ? undefined : JSON.stringify(body),
          signal: AbortSignal.timeout(options.timeoutMs),
        }),
    );
  } catch (cause) {
    const timedOut = cause instanceof DOMException && cause.name === 'TimeoutError';
    throw new ProviderError(
      provider,
      timedOut ? 'timeout' : 'network_error',
      true,
      timedOut
        ? `${provider} did not answer ${method} ${route} within ${options.timeoutMs} ms`
        : `${provider} unreachable`,
      { cause },
    );
  }
  let answer: BankAnswer = {};
  try {
    answer = (await response.json()) as BankAnswer;
  } catch (cause) {
    if (response.status < 500) {
      throw new ProviderError(
        provider,
        'unknown',
        true,
        `${provider} sent an unreadable answer (HTTP ${response.status})`,
        {
          httpStatus: response.status,
          cause,
        },
      );
    }
  }
  if (response.status >= 500) {
    throw new ProviderError(
      provider,
      'unavailable',
      true,
      `${provider} answered HTTP ${response.status}: ${answer.message ?? ''}`,
      {
        rawCode: answer.response_code,
        httpStatus: response.status,
      },
    );
  }
  return { status: response.status, answer };
}

/** The transfer's state as the bank reports it; throws when the answer is a refusal or a fault. */
function statusFrom(provider: string, answer: BankAnswer, httpStatus: number): TransferStatusResult {
  const code = answer.response_code;
  const reported = answer.status;
  const base = {
    sessionId: answer.session_id ?? '',
    rawCode: code ?? '',
    ...(answer.message ? { message: answer.message } : {}),
  };
  if (reported === 'successful' || reported === 'failed' || reported === 'pending')
    return { status: reported, ...base };
  const meaning = meaningOf(code);
  if (meaning.kind === 'error') {
    throw new ProviderError(provider, meaning.outcome, meaning.transient, answer.message ?? meaning.description, {
      rawCode: code,
      httpStatus,
    });
  }
  return { status: meaning.status, ...base };
}

export class SandboxBankSwitch implements BankSwitch {
  readonly name = 'sandbox-nip';
  private readonly options: SandboxHttpOptions;

  constructor(options: SandboxHttpOptions) {
    this.options = options;
  }

  async listBanks(): Promise<Bank[]> {
    const { answer } = await call(this.name, this.options, 'GET', '/banks');
    return answer.banks ?? [];
  }

  async nameEnquiry(bankCode: string, accountNumber: string): Promise<NameEnquiryResult> {
    const { status, answer } = await call(this.name, this.options, 'POST', '/nip/name-enquiry', {
      bank_code: bankCode,
      account_number: accountNumber,
    });
    const meaning = meaningOf(answer.response_code);
    if (meaning.kind !== 'status' || meaning.status !== 'successful') {
      const error = meaning.kind === 'error' ? meaning : undefined;
      throw new ProviderError(
        this.name,
        error?.outcome ?? 'unknown',
        error?.transient ?? true,
        answer.message ?? error?.description ?? 'name enquiry did not succeed',
        { rawCode: answer.response_code, httpStatus: status },
      );
    }
    return {
      accountNumber,
      bankCode,
      accountName: answer.account_name ?? '',
      sessionId: answer.session_id ?? '',
    };
  }

  async submitTransfer(input: SubmitTransferInput): Promise<TransferStatusResult> {
    const { status, answer } = await call(this.name, this.options, 'POST', '/nip/transfers', {
      reference: input.reference,
      amount_minor: input.amountMinor,
      bank_code: input.bankCode,
      account_number: input.accountNumber,
      account_name: input.accountName,
      narration: input.narration,
    });
    if (status >= 400) throw this.rejected(answer, status);
    return statusFrom(this.name, answer, status);
  }

  async transferStatus(reference: string): Promise<TransferStatusResult> {
    const { status, answer } = await call(
      this.name,
      this.options,
      'GET',
      routed('/nip/transfers/{reference}', { reference }),
    );
    return statusFrom(this.name, answer, status);
  }

  async settlementReport(date: string): Promise<SettlementReport> {
    const { status, answer } = await call(
      this.name,
      this.options,
      'GET',
      routed('/statements/settlement/{date}', { date }),
    );
    if (status >= 400) throw this.rejected(answer, status);
    const parsed = StatementAnswer.safeParse(answer.statement);
    if (!parsed.success || parsed.data.date !== date) {
      throw new ProviderError(
        this.name,
        'unknown',
        true,
        `${this.name} sent an unreadable settlement statement for ${date}: ${parsed.error?.issues[0]?.message ?? `dated ${parsed.data?.date}`}`,
        { httpStatus: status },
      );
    }
    return {
      date,
      generatedAt: parsed.data.generated_at,
      items: parsed.data.items.map((item) => ({
        kind: item.kind,
        reference: item.reference,
        sessionId: item.session_id,
        amountMinor: item.amount_minor,
        status: item.status,
        provider: item.provider,
        accountNumber: item.account_number,
        valueTime: item.value_time,
      })),
    };
  }

  private rejected(answer: BankAnswer, status: number): ProviderError {
    const meaning = submissionRefusal(status, answer.response_code);
    return new ProviderError(
      this.name,
      meaning.outcome,
      meaning.transient,
      answer.message ?? `${meaning.description} (HTTP ${status})`,
      { rawCode: answer.response_code, httpStatus: status },
    );
  }
}

export class SandboxVirtualAccountProvider implements VirtualAccountProvider {
  readonly name: string;
  private readonly options: SandboxHttpOptions;

  constructor(name: string, options: SandboxHttpOptions) {
    this.name = name;
    this.options = options;
  }

  async allocate(input: AllocateVirtualAccountInput): Promise<AllocatedVirtualAccount> {
    const { status, answer } = await call(this.name, this.options, 'POST', `/providers/${this.name}/virtual-accounts`, {
      reference: input.reference,
      account_name: input.accountName,
      customer_id: input.customerId,
      ...(input.bvn ? { bvn: input.bvn } : {}),
      ...(input.preferredBank ? { preferred_bank: input.preferredBank } : {}),
    });
    if (status >= 400) {
      throw new ProviderError(this.name, 'rejected', false, answer.message ?? `allocation refused (HTTP ${status})`, {
        rawCode: answer.response_code,
        httpStatus: status,
      });
    }
    return {
      accountNumber: answer.account_number ?? '',
      bankCode: answer.bank_code ?? '',
      bankName: answer.bank_name ?? '',
      providerReference: answer.provider_reference ?? '',
    };
  }

  async close(accountNumber: string, reason?: string): Promise<void> {
    const { status, answer } = await call(
      this.name,
      this.options,
      'POST',
      routed(`/providers/${this.name}/virtual-accounts/{account_number}/close`, { account_number: accountNumber }),
      reason ? { reason } : {},
    );
    if (status >= 400) {
      const meaning = meaningOf(answer.response_code);
      throw new ProviderError(
        this.name,
        meaning.kind === 'error' ? meaning.outcome : 'rejected',
        false,
        answer.message ?? `close refused (HTTP ${status})`,
        { rawCode: answer.response_code, httpStatus: status },
      );
    }
  }

  async simulateInboundCredit(
    accountNumber: string,
    credit: { amountMinor: number; senderName?: string; reference?: string },
  ): Promise<{ transactionReference: string; sessionId: string }> {
    const { status, answer } = await call(
      this.name,
      this.options,
      'POST',
      routed(`/control/providers/${this.name}/virtual-accounts/{account_number}/credits`, {
        account_number: accountNumber,
      }),
      {
        amount_minor: credit.amountMinor,
        ...(credit.senderName ? { sender_name: credit.senderName } : {}),
        ...(credit.reference ? { reference: credit.reference } : {}),
      },
    );
    if (status >= 400) {
      throw new ProviderError(
        this.name,
        status === 409 ? 'rejected' : 'not_found',
        false,
        answer.message ?? `credit refused (HTTP ${status})`,
        {
          httpStatus: status,
        },
      );
    }
    return { transactionReference: answer.transaction_reference ?? '', sessionId: answer.session_id ?? '' };
  }
}

export class SandboxCardProcessor implements CardProcessor {
  readonly name = 'sandbox-cards';
  private readonly options: SandboxHttpOptions;

  constructor(options: SandboxHttpOptions) {
    this.options = options;
  }

  private async post(target: string | RoutedPath, body: unknown, timeoutMs?: number): Promise<BankAnswer> {
    const options = timeoutMs === undefined ? this.options : { ...this.options, timeoutMs };
    const { status, answer } = await call(this.name, options, 'POST', target, body);
    if (status >= 400) {
      throw new ProviderError(
        this.name,
        status === 404 ? 'not_found' : 'rejected',
        false,
        answer.message ?? `refused (HTTP ${status})`,
        {
          httpStatus: status,
          rawCode: answer.response_code,
        },
      );
    }
    return answer;
  }

  async issue(input: { reference: string; customerId: string }): Promise<{ cardReference: string; last4: string }> {
    const answer = await this.post('/cards', { reference: input.reference, customer_id: input.customerId });
    return { cardReference: answer.card_reference ?? '', last4: answer.last4 ?? '' };
  }

  async setLocked(cardReference: string, locked: boolean): Promise<void> {
    await this.post(
      routed(`/cards/{card_reference}/${locked ? 'lock' : 'unlock'}`, { card_reference: cardReference }),
      {},
    );
  }

  async fund(input: { cardReference: string; reference: string; amountMinor: number }): Promise<void> {
    await this.post(routed('/cards/{card_reference}/fund', { card_reference: input.cardReference }), {
      reference: input.reference,
      amount_minor: input.amountMinor,
    });
  }

  async simulatePurchase(cardReference: string, purchase: SimulatedPurchase): Promise<ProcessorDecision> {
    const answer = (await this.post(
      routed('/control/cards/{card_reference}/purchases', { card_reference: cardReference }),
      {
        amount_minor: purchase.amountMinor,
        merchant_name: purchase.merchantName,
        merchant_category: purchase.merchantCategory,
        channel: purchase.channel,
        ...(purchase.authorizationId !== undefined ? { authorization_id: purchase.authorizationId } : {}),
      },
      // The processor itself waits up to 2 s for the gateway's decision.
      Math.max(this.options.timeoutMs, 3_000),
    )) as BankAnswer & { authorization_id?: string; decision?: string; reason?: string | null };
    return {
      authorizationId: answer.authorization_id ?? '',
      decision: answer.decision === 'approved' ? 'approved' : 'declined',
      reason: answer.reason ?? null,
    };
  }

  async simulateSettlement(
    authorization: { cardReference: string; authorizationId: string },
    action: { kind: 'clear'; amountMinor: number } | { kind: 'reverse' },
  ): Promise<{ eventId: string }> {
    const answer = (await this.post(
      routed(`/control/card-authorizations/{authorization_id}/${action.kind}`, {
        authorization_id: authorization.authorizationId,
      }),
      {
        card_reference: authorization.cardReference,
        ...(action.kind === 'clear' ? { amount_minor: action.amountMinor } : {}),
      },
    )) as BankAnswer & { event_id?: string };
    return { eventId: answer.event_id ?? '' };
  }
}

/**
 * The sandbox bank's BVN service. The BVN travels in the request body only (never in a path, which
 * logs and spans carry), and no error raised here repeats it.
 */
export class SandboxIdentityVerifier implements IdentityVerifier {
  readonly name = 'sandbox-bvn';
  private readonly options: SandboxHttpOptions;

  constructor(options: SandboxHttpOptions) {
    this.options = options;
  }

  async lookUpBvn(input: { bvn: string; firstName: string; lastName: string }): Promise<BvnHolder | null> {
    const { status, answer } = await call(this.name, this.options, 'POST', '/identity/bvn/lookup', {
      bvn: input.bvn,
      first_name: input.firstName,
      last_name: input.lastName,
    });
    const meaning = meaningOf(answer.response_code);
    if (status === 404 && meaning.kind === 'error' && meaning.outcome === 'not_found') return null;
    if (status >= 400 || meaning.kind !== 'status' || meaning.status !== 'successful') {
      // A lookup is a read: throttling and faults are worth another try; any other 4xx is our
      // request refused, which the same request cannot change.
      const transient =
        status < 400 ? meaning.kind === 'status' || meaning.transient : TRANSIENT_HTTP_STATUSES.has(status);
      throw new ProviderError(
        this.name,
        meaning.kind === 'error' ? meaning.outcome : 'rejected',
        transient,
        `BVN lookup not answered (HTTP ${status}, response code ${answer.response_code ?? '(none)'})`,
        { rawCode: answer.response_code, httpStatus: status },
      );
    }
    if (!answer.first_name || !answer.last_name) {
      throw new ProviderError(this.name, 'unknown', true, "BVN lookup answered without the holder's names", {
        httpStatus: status,
      });
    }
    return { firstName: answer.first_name, lastName: answer.last_name };
  }
}
