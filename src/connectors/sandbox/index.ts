// The `sandbox` connector (decisions §13): the generic connector pointed at the bundled sandbox
// bank, for test keys only. The bank speaks the generic contract at its root, and plays two
// virtual-account providers at `/providers/wema` and `/providers/providus`, so that routing between
// providers is real. Besides the contract, the gateway's sandbox routes use three of the bank's
// control routes (an inbound credit, a card purchase, a clearing or reversal), which take
// SANDBOX_BANK_CONTROL_TOKEN in place of the API key; they are added to the generic objects here.
import { z } from 'zod';
import type { Config } from '../../config.ts';
import type { ProcessorDecision, SimulatedPurchase } from '../capabilities.ts';
import type { CallbackReceiver, Connector } from '../types.ts';
import { GenericBankClient, createGenericConnector, genericCallbackReceiver } from '../generic/index.ts';

export const SANDBOX_CONNECTOR = 'sandbox';

/** The sandbox bank's virtual-account providers (src/sandbox-bank/app.ts VIRTUAL_ACCOUNT_PROVIDERS). */
export const SANDBOX_VIRTUAL_ACCOUNT_PROVIDERS = [
  { name: 'wema', pathPrefix: '/providers/wema', supportsPreferredBank: false },
  { name: 'providus', pathPrefix: '/providers/providus', supportsPreferredBank: true },
] as const;

export type SandboxConnectorConfig = Pick<
  Config,
  'sandboxBankUrl' | 'PROVIDER_TIMEOUT_MS' | 'sandboxBankApiKey' | 'providerCallbackSecret'
> &
  Partial<Pick<Config, 'SANDBOX_BANK_CONTROL_TOKEN'>>;

/** The sandbox bank's callbacks at `/provider-callbacks/sandbox`, signed with PROVIDER_CALLBACK_SECRET. */
export function sandboxCallbackReceiver(secret: string): CallbackReceiver {
  return genericCallbackReceiver(secret, {
    virtualAccountProviders: SANDBOX_VIRTUAL_ACCOUNT_PROVIDERS.map((provider) => provider.name),
  });
}

const CreditAnswer = z.object({ transaction_reference: z.string().min(1), session_id: z.string().min(1) });
const PurchaseAnswer = z.object({
  authorization_id: z.string().min(1),
  decision: z.enum(['approved', 'declined']),
  reason: z.string().nullable(),
});
const SettlementAnswer = z.object({ event_id: z.string().min(1) });

/** The processor waits up to 2 s for the gateway's decision; its answer to us comes after. */
const PURCHASE_TIMEOUT_MS = 3_000;

export function createSandboxConnector(config: SandboxConnectorConfig): Connector {
  const connector = createGenericConnector({
    name: SANDBOX_CONNECTOR,
    modes: ['test'],
    baseUrl: config.sandboxBankUrl,
    apiKey: config.sandboxBankApiKey,
    webhookSecret: config.providerCallbackSecret,
    capabilities: ['transfers', 'virtual_accounts', 'identity', 'cards'],
    timeoutMs: config.PROVIDER_TIMEOUT_MS,
    virtualAccountProviders: SANDBOX_VIRTUAL_ACCOUNT_PROVIDERS,
  });
  // The control routes, at the bank's root, with the control token (the API key where none is
  // set: the bank then leaves them open, which config allows on loopback only).
  const control = (provider: string) =>
    new GenericBankClient({
      provider,
      baseUrl: config.sandboxBankUrl,
      apiKey: config.SANDBOX_BANK_CONTROL_TOKEN ?? config.sandboxBankApiKey,
      timeoutMs: config.PROVIDER_TIMEOUT_MS,
    });

  const virtualAccounts = connector.virtualAccounts!.map((route) => {
    const client = control(route.provider.name);
    const simulateInboundCredit = async (
      accountNumber: string,
      credit: {
        amountMinor: number;
        senderName?: string;
        reference?: string;
        senderAccountNumber?: string;
        senderBankCode?: string;
      },
    ): Promise<{ transactionReference: string; sessionId: string }> => {
      const answer = await client.call(
        {
          method: 'POST',
          route: `/control/providers/${route.provider.name}/virtual-accounts/{account_number}/credits`,
          params: { account_number: accountNumber },
        },
        CreditAnswer,
        {
          body: {
            amount_minor: credit.amountMinor,
            ...(credit.senderName ? { sender_name: credit.senderName } : {}),
            ...(credit.reference ? { reference: credit.reference } : {}),
            ...(credit.senderAccountNumber ? { sender_account_number: credit.senderAccountNumber } : {}),
            ...(credit.senderBankCode ? { sender_bank_code: credit.senderBankCode } : {}),
          },
        },
      );
      return { transactionReference: answer.transaction_reference, sessionId: answer.session_id };
    };
    return { ...route, provider: Object.assign(route.provider, { simulateInboundCredit }) };
  });

  const client = control(SANDBOX_CONNECTOR);
  const simulatePurchase = async (cardReference: string, purchase: SimulatedPurchase): Promise<ProcessorDecision> => {
    const answer = await client.call(
      { method: 'POST', route: '/control/cards/{card_reference}/purchases', params: { card_reference: cardReference } },
      PurchaseAnswer,
      {
        body: {
          amount_minor: purchase.amountMinor,
          merchant_name: purchase.merchantName,
          merchant_category: purchase.merchantCategory,
          channel: purchase.channel,
          ...(purchase.authorizationId !== undefined ? { authorization_id: purchase.authorizationId } : {}),
        },
        timeoutMs: Math.max(config.PROVIDER_TIMEOUT_MS, PURCHASE_TIMEOUT_MS),
      },
    );
    return { authorizationId: answer.authorization_id, decision: answer.decision, reason: answer.reason };
  };
  const simulateSettlement = async (
    authorization: { cardReference: string; authorizationId: string },
    action: { kind: 'clear'; amountMinor: number } | { kind: 'reverse' },
  ): Promise<{ eventId: string }> => {
    const answer = await client.call(
      {
        method: 'POST',
        route: `/control/card-authorizations/{authorization_id}/${action.kind}`,
        params: { authorization_id: authorization.authorizationId },
      },
      SettlementAnswer,
      {
        body: {
          card_reference: authorization.cardReference,
          ...(action.kind === 'clear' ? { amount_minor: action.amountMinor } : {}),
        },
      },
    );
    return { eventId: answer.event_id };
  };
  const cards = Object.assign(connector.cards!, { simulatePurchase, simulateSettlement });

  return { ...connector, virtualAccounts, cards };
}
