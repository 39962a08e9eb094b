// GET /api/v1/banks/resolve (decisions §11): the name enquiry that transfers run, offered to
// tenants so they can confirm a recipient before sending. Answers are kept briefly per (bank,
// account) — a found name and "no such account" alike, never an outage — so a form that checks as
// the user types does not become a storm of enquiries at the bank switch; and each enquiry holds one
// of its connector's slots, as a transfer's does (src/connectors/name-enquiry-slots.ts).
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { ResourceErrorSchema, envelopeSchema, ok } from '../http/envelope.ts';
import { ApiError } from '../http/errors.ts';
import { enquireName } from '../connectors/name-enquiry.ts';
import { type Banks, type Providers, banksOf } from '../connectors/registry.ts';
import type { NameEnquirySlots } from '../connectors/name-enquiry-slots.ts';
import { type Bank, ProviderError } from '../connectors/capabilities.ts';
import type { KeyMode } from '../connectors/types.ts';

export const ResolveAccountQuery = z.object({
  bank_code: z.string({ error: 'is required' }).min(1, 'is required').max(10, 'must be at most 10 characters'),
  account_number: z.string({ error: 'is required' }).regex(/^\d{10}$/, 'must be exactly 10 digits'),
});

const ResolvedAccount = z.object({
  account_number: z.string(),
  account_name: z.string(),
  bank_code: z.string(),
  bank_name: z.string(),
});
type ResolvedAccount = z.infer<typeof ResolvedAccount>;

export type Resolution = { found: true; account: ResolvedAccount } | { found: false; message: string };

/** Resolutions by `mode:bank:account`, each for `ttlMs`; the least recently used go past `maxEntries`. */
export class NameEnquiryCache {
  private readonly entries = new Map<string, { resolution: Resolution; expiresAt: number }>();
  private readonly ttlMs: number;
  private readonly maxEntries: number;
  private readonly now: () => number;

  constructor(options: { ttlMs: number; maxEntries?: number; now?: () => number }) {
    this.ttlMs = options.ttlMs;
    this.maxEntries = options.maxEntries ?? 10_000;
    this.now = options.now ?? Date.now;
  }

  get(key: string): Resolution | undefined {
    const entry = this.entries.get(key);
    if (!entry) return undefined;
    this.entries.delete(key);
    if (entry.expiresAt <= this.now()) return undefined;
    this.entries.set(key, entry);
    return entry.resolution;
  }

  set(key: string, resolution: Resolution): void {
    if (this.ttlMs <= 0) return;
    this.entries.delete(key);
    this.entries.set(key, { resolution, expiresAt: this.now() + this.ttlMs });
    while (this.entries.size > this.maxEntries) this.entries.delete(this.entries.keys().next().value as string);
  }
}

export function resolveAccountRoutes(
  app: FastifyInstance,
  deps: { providers: Providers; cache: NameEnquiryCache; slots: NameEnquirySlots },
) {
  app.get(
    '/api/v1/banks/resolve',
    {
      config: { reachesProvider: 'transfers' },
      schema: {
        tags: ['banks'],
        summary: "Look up an account's name at its bank before sending to it (name enquiry)",
        description:
          'Unknown bank code or malformed account number: 400. No such account at the bank: 422 ' +
          '`INVALID_ACCOUNT`. Bank unreachable: 503 `UNAVAILABLE` with Retry-After. Answers are kept ' +
          'for `NAME_ENQUIRY_CACHE_MS` per bank and account.',
        security: [{ apiKey: [] }],
        querystring: ResolveAccountQuery,
        response: {
          200: envelopeSchema(ResolvedAccount),
          400: ResourceErrorSchema,
          401: ResourceErrorSchema,
          403: ResourceErrorSchema,
          422: ResourceErrorSchema,
          503: ResourceErrorSchema,
        },
      },
    },
    async (request) => {
      const { bank_code: bankCode, account_number: accountNumber } = request.query as z.infer<
        typeof ResolveAccountQuery
      >;
      const mode = request.auth!.mode;
      const bank = await supportedBank(deps.providers, mode, bankCode);
      const key = `${request.auth!.mode}:${bankCode}:${accountNumber}`;
      let resolution = deps.cache.get(key);
      if (!resolution) {
        resolution = await lookUpAccount(deps, request.auth!.tenantId, mode, bank, accountNumber);
        deps.cache.set(key, resolution);
      }
      if (!resolution.found) throw new ApiError('account_not_found', resolution.message);
      return ok(request, resolution.account);
    },
  );
}

/** The bank of `bankCode` in this bank list, or none: 503 UNAVAILABLE when the list cannot be had. */
export async function findBank(banks: Banks, bankCode: string): Promise<Bank | undefined> {
  try {
    return await banks.find(bankCode);
  } catch (cause) {
    throw new ApiError('unavailable', 'the bank list is unavailable right now; retry shortly', null, { cause });
  }
}

/**
 * The bank of `bankCode` in the key mode's bank list: 503 UNAVAILABLE when the list cannot be had,
 * 400 naming `bank_code` when it has no such bank.
 */
export async function supportedBank(providers: Providers, mode: KeyMode, bankCode: string): Promise<Bank> {
  const bank = await findBank(banksOf(providers, mode), bankCode);
  if (!bank) {
    throw ApiError.validation([{ path: 'bank_code', message: 'is not a supported bank code (GET /api/v1/banks)' }]);
  }
  return bank;
}

/**
 * A fresh name enquiry of the account at its bank (src/connectors/name-enquiry.ts): the name the
 * bank gives, or that it has no such account; 503 UNAVAILABLE when no connector answered.
 */
export async function lookUpAccount(
  deps: { providers: Providers; slots: NameEnquirySlots },
  tenantId: string,
  mode: KeyMode,
  bank: Bank,
  accountNumber: string,
): Promise<Resolution> {
  try {
    const result = await enquireName(deps, tenantId, mode, bank.code, accountNumber);
    return {
      found: true,
      account: {
        account_number: accountNumber,
        account_name: result.accountName,
        bank_code: bank.code,
        bank_name: bank.name,
      },
    };
  } catch (cause) {
    if (!(cause instanceof ProviderError) || cause.outcome !== 'invalid_account') {
      throw new ApiError('unavailable', `${bank.name} did not answer the name enquiry; retry shortly`, null, { cause });
    }
    return { found: false, message: `no account ${accountNumber} at ${bank.name}` };
  }
}
