// The app's operations as its own OpenAPI document states them, for the suites that test every
// route without a list of routes (the BOLA matrix, the fuzzer): a route added later is covered by
// being in the document. Also which of a tenant's resources a path's id names, and the ids of one
// tenant's real resources of each kind, so that requests can reach the handlers.
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { auth, issueCard, newSigningSecret, registerEndpoint, transferBody } from './api.ts';
import { eventually } from './eventually.ts';
import { type Receiver, startReceiver } from './receiver.ts';
import { type GatewayStack, startWebhookFanout } from './stack.ts';

/** A JSON Schema as the document holds it (draft 2020-12, inlined; the document has no $ref). */
export type JsonSchema = Record<string, unknown>;

export interface OpenApiParameter {
  in: 'path' | 'query' | 'header' | 'cookie';
  name: string;
  required?: boolean;
  schema?: JsonSchema;
}

export interface OpenApiOperation {
  parameters?: OpenApiParameter[];
  requestBody?: { required?: boolean; content?: Record<string, { schema?: JsonSchema }> };
  responses?: Record<string, { content?: Record<string, { schema?: JsonSchema }> }>;
  security?: unknown[];
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, OpenApiOperation>>;
}

export interface Operation {
  /** Upper case: GET, POST… */
  method: string;
  /** The document's path, with `{name}` parameters. */
  template: string;
  /** `METHOD /template`, the operation's name in messages. */
  key: string;
  spec: OpenApiOperation;
}

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];

export async function openApiDocument(app: FastifyInstance): Promise<OpenApiDocument> {
  const response = await app.inject({ method: 'GET', url: '/openapi.json' });
  expect(response.statusCode).toBe(200);
  return response.json<OpenApiDocument>();
}

/** Every operation of the document, in its order. */
export async function documentOperations(app: FastifyInstance): Promise<Operation[]> {
  const document = await openApiDocument(app);
  const operations: Operation[] = [];
  for (const [template, methods] of Object.entries(document.paths)) {
    for (const [method, spec] of Object.entries(methods)) {
      if (!METHODS.includes(method)) continue;
      const upper = method.toUpperCase();
      operations.push({ method: upper, template, key: `${upper} ${template}`, spec });
    }
  }
  return operations;
}

/** Which kind of a tenant's resources a path's id names: the path segment before the parameter. */
export const RESOURCE_OF_SEGMENT: Record<string, ResourceKind> = {
  transfers: 'transfer',
  'virtual-accounts': 'virtualAccount',
  cards: 'card',
  customers: 'customer',
  'webhook-endpoints': 'endpoint',
  'webhook-deliveries': 'delivery',
  events: 'event',
  'card-authorizations': 'authorization',
  bulk: 'batch',
  recipients: 'recipient',
  'api-keys': 'apiKey',
  'audit-log': 'auditEntry',
};

export type ResourceKind =
  | 'transfer'
  | 'batch'
  | 'virtualAccount'
  | 'card'
  | 'authorization'
  | 'customer'
  | 'endpoint'
  | 'delivery'
  | 'event'
  | 'recipient'
  | 'apiKey'
  | 'auditEntry';

/** A simulated purchase on a card (decisions §11): what gives the tenant an authorization. */
export const PURCHASE = { amount_minor: 1_000, merchant_name: 'BOLA', merchant_category: '5411', channel: 'web' };

/** The resource kind of the template's first path parameter; undefined when no segment names one. */
export function resourceOf(template: string): ResourceKind | undefined {
  const segments = template.split('/');
  const index = segments.findIndex((segment) => segment.startsWith('{'));
  if (index < 0) return undefined;
  return RESOURCE_OF_SEGMENT[segments[index - 1] ?? ''];
}

/** The template with its first parameter replaced by `id` (URL-encoded). */
export const fillPath = (template: string, id: string) => template.replace(/\{[^}]+\}/, encodeURIComponent(id));

export type ResourceIds = Record<ResourceKind, string>;

export interface TenantResources {
  ids: ResourceIds;
  /** Stops the fan-out and the webhook receiver the resources needed. */
  close(): Promise<void>;
}

/**
 * One resource of each kind for the tenant of `apiKey` (it needs a funded wallet and the
 * identity_customers feature): a webhook endpoint subscribed to transfer.settled, a transfer that
 * settles, a batch of one transfer, a virtual account, a card with the authorization of a simulated purchase, an identity
 * customer, a saved recipient, an API key (made with `apiKey`, which must hold `*`) and the audit
 * entry of its making, the delivery of the transfer's event
 * (succeeded, to a local receiver) and an event. Events are fanned out to deliveries as a worker
 * process does until close().
 */
export async function createTenantResources(
  stack: GatewayStack,
  apiKey: string,
  name: string,
): Promise<TenantResources> {
  const { app } = stack;
  const receiver: Receiver = await startReceiver();
  const fanout = startWebhookFanout(stack, [0]);
  const close = async () => {
    await fanout.stop();
    await receiver.close();
  };
  try {
    const endpoint = await registerEndpoint(app, apiKey, {
      url: `${receiver.url}/${name}`,
      events: ['transfer.settled'],
      signing_secret: newSigningSecret(),
    });
    expect(endpoint.statusCode).toBe(201);
    const transfer = await app.inject({
      method: 'POST',
      url: '/api/v1/transfers',
      headers: auth(apiKey),
      payload: transferBody(name, { reference: `${name}-1` }),
    });
    expect(transfer.statusCode).toBe(201);
    const batch = await app.inject({
      method: 'POST',
      url: '/api/v1/transfers/bulk',
      headers: auth(apiKey),
      payload: { batch_reference: `${name}-batch`, transfers: [transferBody(name, {})] },
    });
    expect(batch.statusCode).toBe(202);
    const account = await app.inject({
      method: 'POST',
      url: '/api/v1/virtual-accounts',
      headers: auth(apiKey),
      payload: { customer_id: name, account_name: `${name.toUpperCase()} ACCOUNT` },
    });
    expect(account.statusCode).toBe(201);
    const card = await issueCard(app, apiKey, name);
    expect(card.statusCode).toBe(201);
    const purchase = await app.inject({
      method: 'POST',
      url: `/api/v1/sandbox/cards/${card.json().data.id}/purchases`,
      headers: auth(apiKey),
      payload: PURCHASE,
    });
    expect(purchase.statusCode).toBe(200);
    const customer = await app.inject({
      method: 'POST',
      url: '/api/v1/identity/customers',
      headers: auth(apiKey),
      payload: { external_reference: name, first_name: 'Ada', last_name: 'Obi', country: 'NG' },
    });
    expect(customer.statusCode).toBe(201);
    const recipient = await app.inject({
      method: 'POST',
      url: '/api/v1/recipients',
      headers: auth(apiKey),
      payload: { bank_code: '058', account_number: '0123456789', label: name },
    });
    expect(recipient.statusCode).toBe(201);
    const apiKeyMade = await app.inject({
      method: 'POST',
      url: '/api/v1/api-keys',
      headers: auth(apiKey),
      payload: { name: `${name} key`, scopes: ['read'] },
    });
    expect(apiKeyMade.statusCode).toBe(201);
    const auditEntry = (
      await app.inject({ method: 'GET', url: '/api/v1/audit-log?action=api_key.created', headers: auth(apiKey) })
    ).json().data.items[0] as { id: string };
    const delivery = await eventually(async () => {
      const list = await app.inject({ method: 'GET', url: '/api/v1/webhook-deliveries', headers: auth(apiKey) });
      const items = list.json().data.items as { id: string; status: string }[];
      return items.find((item) => item.status === 'succeeded');
    });
    // The batch's item settles on its own: done before anyone compares the tenant's state.
    await eventually(async () => {
      const read = await app.inject({
        method: 'GET',
        url: `/api/v1/transfers/bulk/${batch.json().data.id}`,
        headers: auth(apiKey),
      });
      return read.json().data.status === 'completed';
    }, 60_000);
    const event = (await app.inject({ method: 'GET', url: '/api/v1/events', headers: auth(apiKey) })).json().data
      .items[0] as { id: string };
    return {
      ids: {
        transfer: transfer.json().data.id,
        batch: batch.json().data.id,
        virtualAccount: account.json().data.id,
        card: card.json().data.id,
        authorization: purchase.json().data.authorization_id,
        customer: customer.json().data.id,
        endpoint: endpoint.json().data.id,
        delivery: delivery.id,
        event: event.id,
        recipient: recipient.json().data.id,
        apiKey: apiKeyMade.json().data.id,
        auditEntry: auditEntry.id,
      },
      close,
    };
  } catch (error) {
    await close();
    throw error;
  }
}
