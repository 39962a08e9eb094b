// The bank's callbacks under the generic contract, received: the Standard Webhooks signature
// checked (./contract.ts: constant time, timestamps more than 5 minutes off refused so that a
// captured callback cannot be replayed later), and bodies `{id, type, data}` checked against the
// contract's event schemas and put into the gateway's vocabulary (NormalizedCallback).
import type { z } from 'zod';
import { parseJsonText } from '../json-text.ts';
import type { CallbackReceiver, NormalizeResult } from '../types.ts';
import {
  CallbackEnvelope,
  TransferCompletedData,
  TransferReversedData,
  VirtualAccountCreditedData,
  verifyStandardWebhook,
} from './contract.ts';

type Issues = { path: string; message: string }[];

function issuesOf(error: z.ZodError, prefix: string[] = []): Issues {
  return error.issues.map((issue) => ({
    path: [...prefix, ...issue.path.map(String)].join('.') || 'body',
    message: issue.message,
  }));
}

/** Only the keys whose values are strings: the dispatcher's handlers read strings or nothing. */
function strings(entries: Record<string, unknown>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(entries).filter((entry): entry is [string, string] => typeof entry[1] === 'string'),
  );
}

/** The body in the gateway's vocabulary; never throws, whatever the body holds. */
export function normalizeContractCallback(
  rawBody: string,
  options: { virtualAccountProviders?: readonly string[] } = {},
): NormalizeResult {
  const json = parseJsonText(rawBody);
  if (!json.ok) return { ok: false, issues: [{ path: 'body', message: 'is not valid JSON' }] };
  const envelope = CallbackEnvelope.safeParse(json.value);
  if (!envelope.success) return { ok: false, issues: issuesOf(envelope.error) };
  const { id: eventId, type, data } = envelope.data;

  if (type === 'transfer.completed') {
    const parsed = TransferCompletedData.safeParse(data);
    if (!parsed.success) return { ok: false, issues: issuesOf(parsed.error, ['data']) };
    const { reference, status, session_id, code, message } = parsed.data;
    return {
      ok: true,
      callback: {
        eventId,
        type: status === 'successful' ? 'transfer.successful' : 'transfer.failed',
        data: { reference, ...strings({ session_id, response_code: code, message }) },
      },
    };
  }

  // v1.1: the bank paid the transfer out, then reversed it. The gateway confirms it by the status
  // query before it moves any money (decisions §21).
  if (type === 'transfer.reversed') {
    const parsed = TransferReversedData.safeParse(data);
    if (!parsed.success) return { ok: false, issues: issuesOf(parsed.error, ['data']) };
    const { reference, session_id, code, message } = parsed.data;
    return {
      ok: true,
      callback: {
        eventId,
        type: 'transfer.reversed',
        data: { reference, ...strings({ session_id, response_code: code, message }) },
      },
    };
  }

  if (type === 'virtual_account.credited') {
    const parsed = VirtualAccountCreditedData.safeParse(data);
    if (!parsed.success) return { ok: false, issues: issuesOf(parsed.error, ['data']) };
    const credit = parsed.data;
    const known = options.virtualAccountProviders;
    if (credit.provider && known && !known.includes(credit.provider)) {
      return {
        ok: false,
        issues: [{ path: 'data.provider', message: "is not one of this bank's virtual-account providers" }],
      };
    }
    return {
      ok: true,
      callback: {
        eventId,
        type: 'virtual_account.credit',
        data: {
          account_number: credit.account_number,
          amount_minor: credit.amount_minor,
          transaction_reference: credit.transaction_reference,
          sender_name: credit.sender_name,
          ...strings({
            session_id: credit.session_id,
            provider: credit.provider,
            sender_account_number: credit.sender_account_number,
            sender_bank_code: credit.sender_bank_code,
          }),
        },
      },
    };
  }

  // Card authorizations (their data checked where they are read: the callback route and
  // src/cards/callbacks.ts) and anything else, recorded for operators, as they came.
  return { ok: true, callback: { eventId, type, data } };
}

export function genericCallbackReceiver(
  webhookSecret: string,
  options: { virtualAccountProviders?: readonly string[] } = {},
): CallbackReceiver {
  return {
    verify: (rawBody, headers, now) => verifyStandardWebhook(webhookSecret, rawBody, headers, now),
    normalize: (rawBody) => normalizeContractCallback(rawBody, options),
  };
}
