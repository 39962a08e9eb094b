// Broken object-level authorisation, tested from the route table rather than from memory: every
// operation of the OpenAPI document whose path names an id is called with tenant B's key on tenant
// A's real ids and on ids that exist nowhere. Each must answer 404 exactly as it answers for an id
// that does not exist (same status, same envelope, same message once the id is masked), so B learns
// nothing, and A's rows (and A's API keys and their secrets) must be byte-for-byte what they were.
// A's revoked key gets 401 everywhere, and a live key 403 on the sandbox routes (decisions §12);
// A's own live key answers A's test ids as ids that do not exist, A's keys and audit entries 404. A route added later is covered without
// editing this file, or fails here until its request body and its resource are named below.
import { randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { describe, expect, it } from 'vitest';
import { issueKey, revokeKey, createTenant } from '../../src/tenants/tenants.ts';
import { postMovement } from '../../src/ledger/ledger.ts';
import { walletFunding } from '../../src/ledger/movements.ts';
import { auth } from '../support/api.ts';
import { eventually } from '../support/eventually.ts';
import {
  PURCHASE,
  type ResourceKind,
  createTenantResources,
  documentOperations,
  fillPath,
  resourceOf,
} from '../support/openapi.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `bola-${process.pid}`;

let stack: GatewayStack;

useGatewayStack({ taskQueue: TASK_QUEUE, bank: { completionDelayMs: 100 } }, (started) => {
  stack = started;
});

/** A valid body for each operation that takes one: B's request must reach the lookup, not stop at validation. */
const BODIES: Record<string, unknown> = {
  'POST /api/v1/cards/{card_id}/jit-fund': { amount_minor: 10_000, transaction_reference: 'bola-jit' },
  'POST /api/v1/cards/{card_id}/fund': { amount_minor: 10_000, transaction_reference: 'bola-fund' },
  'POST /api/v1/cards/{card_id}/lock': { reason: 'bola' },
  'POST /api/v1/cards/{card_id}/unlock': { reason: 'bola' },
  'PATCH /api/v1/cards/{card_id}': { jit_funding: true },
  'PUT /api/v1/cards/{card_id}/security-settings': {
    per_transaction_limit_minor: 1,
    daily_limit_minor: 1,
    channels: { pos: false, web: false, atm: false },
    blocked_merchant_categories: ['5999'],
  },
  'PUT /api/v1/cards/{card_id}/auto-reload': { enabled: true, threshold_minor: 1, amount_minor: 100 },
  'POST /api/v1/virtual-accounts/{id}/close': { reason: 'bola' },
  'POST /api/v1/virtual-accounts/{id}/credits/{credit_id}/return': { amount_minor: 10_000, reason: 'bola' },
  'POST /api/v1/sandbox/virtual-accounts/{id}/credits': { amount_minor: 10_000, reference: 'bola-credit' },
  'POST /api/v1/webhook-deliveries/{id}/replay': {},
  'POST /api/v1/webhook-endpoints/{id}/test': { type: 'transfer.settled' },
  'PATCH /api/v1/webhook-endpoints/{id}': { events: ['transfer.failed'], enabled: false },
  'POST /api/v1/webhook-endpoints/{id}/rotate-secret': { signing_secret: 'whsec_Ym9sYS1yb3RhdGlvbi1zZWNyZXQtMzI=' },
  // Within the 14 days recover reaches back, however long the run takes to get here.
  'POST /api/v1/webhook-endpoints/{id}/recover': { since: new Date(Date.now() - 60 * 60_000).toISOString() },
  'POST /api/v1/sandbox/cards/{card_id}/purchases': PURCHASE,
  'POST /api/v1/sandbox/card-authorizations/{authorization_id}/clear': { amount_minor: 1_000 },
  'POST /api/v1/sandbox/card-authorizations/{authorization_id}/reverse': {},
  'POST /api/v1/identity/customers/{id}/bvn-verification': { bvn: '22222222222' },
  'POST /api/v1/transfers/{id}/approve': {},
  'POST /api/v1/transfers/{id}/reject': { reason: 'bola' },
  'POST /api/v1/transfers/bulk/{id}/approve': {},
  'POST /api/v1/transfers/bulk/{id}/reject': { reason: 'bola' },
  'POST /api/v1/api-keys/{id}/roll': { expires_in_hours: 1 },
};

interface IdOperation {
  method: string;
  template: string;
  key: string;
}

/** Tenant routes (those an API key opens) are under /api/v1; a provider's signed callbacks are not. */
async function operationsWithIds(): Promise<IdOperation[]> {
  return (await documentOperations(stack.app)).filter(
    (operation) => operation.template.startsWith('/api/v1/') && /\{[^}]+\}/.test(operation.template),
  );
}

function resourceOfTemplate(template: string): ResourceKind {
  const resource = resourceOf(template);
  if (!resource) throw new Error(`${template}: name the resource its id belongs to in RESOURCE_OF_SEGMENT`);
  return resource;
}

function call(operation: IdOperation, apiKey: string, id: string): Promise<LightMyRequestResponse> {
  const body = BODIES[operation.key];
  if (operation.method !== 'GET' && operation.method !== 'DELETE' && body === undefined) {
    throw new Error(`${operation.key}: give a valid body in BODIES`);
  }
  return stack.app.inject({
    method: operation.method as 'GET',
    url: fillPath(operation.template, id),
    headers: auth(apiKey),
    ...(body !== undefined && operation.method !== 'GET' ? { payload: body as object } : {}),
  });
}

/** The answer as B can read it, with what differs between any two requests (time, request id, the id asked for) masked. */
function readable(response: LightMyRequestResponse, id: string) {
  const text = response.body
    .replaceAll(id, '<id>')
    .replace(/"(timestamp|requestId)":"[^"]*"/g, '"$1":"…"')
    .replace(/req_[0-9a-f]{32}/g, 'req_…');
  return { status: response.statusCode, body: JSON.parse(text) as unknown, type: response.headers['content-type'] };
}

/**
 * A's keys and their secrets (keys are left out of rowsOf, whose tables the tests' own key issuing
 * changes): all but when each was last used.
 */
async function keysOf(tenantId: string): Promise<unknown[]> {
  return stack.db.orm.em.fork().execute(
    `select k.id, k.name, k.prefix, k.scopes, k.allowed_ips, k.revoked_at, k.expires_at, s.key_hash, s.expires_at as secret_expires_at
       from api_keys k join tenants t on t.id = k.tenant_id left join api_key_secrets s on s.key_id = k.id
      where t.owner_id = ? order by s.key_hash`,
    [tenantId],
  );
}

/**
 * Every row of A's: tables with a tenant_id by it, A's tenant rows (its modes) by their owner, the
 * rest whole (nothing B does may touch them; B's own live mode, made by its first live key, is B's).
 */
async function rowsOf(tenantId: string): Promise<Record<string, unknown[]>> {
  const em = stack.db.orm.em.fork();
  const tables = await em.execute<{ table_name: string; tenant: boolean }[]>(
    `select t.table_name, exists (select 1 from information_schema.columns c
                                   where c.table_schema = t.table_schema and c.table_name = t.table_name
                                     and c.column_name = 'tenant_id') as tenant
       from information_schema.tables t
      where t.table_schema = 'public' and t.table_type = 'BASE TABLE'
        -- rate_limit_windows counts B's own calls on B's budget (and the address's): no row of A's
        and t.table_name not in ('mikro_orm_migrations', 'api_keys', 'api_key_secrets', 'rate_limit_windows')
      order by t.table_name`,
  );
  const snapshot: Record<string, unknown[]> = {};
  for (const { table_name: table, tenant } of tables) {
    const scope = tenant ? 'where tenant_id = ?' : table === 'tenants' ? 'where owner_id = ?' : '';
    const rows = await em.execute<{ row: string }[]>(
      `select row_to_json(t)::text as row from "${table}" t ${scope} order by 1`,
      scope ? [tenantId] : [],
    );
    snapshot[table] = rows.map((row) => row.row);
  }
  return snapshot;
}

describe('object-level authorisation, from the route table', () => {
  it("answers every id route with B's key on A's ids exactly as for ids that do not exist, and changes nothing of A's", async () => {
    const em = stack.db.orm.em.fork();
    const a = await createTenant(em, { name: 'A', features: ['identity_customers'] });
    const b = await createTenant(em, { name: 'B', features: ['identity_customers'] });
    for (const tenant of [a, b]) {
      await postMovement(
        em,
        tenant.tenant.tenant_id,
        walletFunding({ tenantId: tenant.tenant.tenant_id, reference: 'bola', amountMinor: 5_000_000 }),
      );
    }
    const aKey = a.key.api_key;
    const bKey = b.key.api_key;
    // A's resources, one of each kind the routes name.
    const resources = await createTenantResources(stack, aKey, 'bola');
    try {
      const ids: Record<ResourceKind, string> = resources.ids;
      // Quiet: every transfer final, every delivery done and every event fanned out, so that nothing
      // moves A's rows but B's requests (a delivery still in flight would record its
      // event.delivery.succeeded, and the fan-out then mark it, in the middle of the comparison).
      await eventually(async () => {
        const [row] = await stack.db.orm.em.fork().execute<{ waiting: string }[]>(
          `select (select count(*) from events where fanned_out_at is null)
                + (select count(*) from webhook_deliveries where status in ('queued', 'retrying'))
                + (select count(*) from transfers where status in ('pending', 'processing')) as waiting`,
        );
        return Number(row!.waiting) === 0;
      });

      const operations = await operationsWithIds();
      expect(operations.length).toBeGreaterThanOrEqual(15);
      const before = await rowsOf(a.tenant.tenant_id);
      const keysBefore = await keysOf(a.tenant.tenant_id);
      const answers: Record<string, unknown> = {};
      for (const operation of operations) {
        const theirs = ids[resourceOfTemplate(operation.template)];
        const nowhere = randomUUID();
        const onTheirs = readable(await call(operation, bKey, theirs), theirs);
        const onNothing = readable(await call(operation, bKey, nowhere), nowhere);
        expect(onTheirs.status, `${operation.key} with B's key on A's id`).toBe(404);
        expect(onTheirs, `${operation.key}: A's id must read as one that does not exist`).toEqual(onNothing);
        answers[operation.key] = onTheirs.status;
      }
      expect(await rowsOf(a.tenant.tenant_id)).toEqual(before);
      expect(await keysOf(a.tenant.tenant_id)).toEqual(keysBefore);
      expect(Object.keys(answers)).toEqual(
        expect.arrayContaining([
          'DELETE /api/v1/api-keys/{id}',
          'POST /api/v1/api-keys/{id}/roll',
          'GET /api/v1/audit-log/{id}',
        ]),
      );

      // A's own key, once revoked, opens nothing; a live key never reaches the sandbox routes.
      const spare = await issueKey(stack.db.orm.em.fork(), a.tenant.tenant_id, 'test');
      await revokeKey(stack.db.orm.em.fork(), spare.key_prefix);
      const live = await issueKey(stack.db.orm.em.fork(), b.tenant.tenant_id, 'live');
      await eventually(async () => (await call(operations[0]!, spare.api_key, 'x')).statusCode === 401, 5_000);
      for (const operation of operations) {
        const id = ids[resourceOfTemplate(operation.template)];
        expect((await call(operation, spare.api_key, id)).statusCode, `${operation.key} with a revoked key`).toBe(401);
        if (operation.template.startsWith('/api/v1/sandbox/')) {
          expect((await call(operation, live.api_key, id)).statusCode, `${operation.key} with a live key`).toBe(403);
        }
      }
      expect(await rowsOf(a.tenant.tenant_id)).toEqual(before);

      // The other mode is another world (decisions §16): A's live key finds none of A's test ids,
      // and answers each as it answers an id that does not exist; A's keys and audit entries: 404.
      const aLive = await issueKey(stack.db.orm.em.fork(), a.tenant.tenant_id, 'live');
      const keysWithLive = await keysOf(a.tenant.tenant_id);
      for (const operation of operations) {
        const theirs = ids[resourceOfTemplate(operation.template)];
        const nowhere = randomUUID();
        const onTheirs = readable(await call(operation, aLive.api_key, theirs), theirs);
        expect(onTheirs, `${operation.key} with A's live key on A's test id`).toEqual(
          readable(await call(operation, aLive.api_key, nowhere), nowhere),
        );
        if (/\/(api-keys|audit-log)\//.test(operation.template)) {
          expect(onTheirs.status, `${operation.key} with A's live key`).toBe(404);
        }
      }
      expect(await keysOf(a.tenant.tenant_id)).toEqual(keysWithLive);
    } finally {
      await resources.close();
    }
  });
});
