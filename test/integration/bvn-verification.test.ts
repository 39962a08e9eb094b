// BVN verification (decisions §11, #15 item 6) on the real stack: the sandbox bank's magic BVNs and
// each outcome on the customer and in its events, the workflow per verification, bad input naming
// `bvn`, other tenants' customers, a second request while one is pending, Idempotency-Key, a
// verified customer, the bank's outage retried through — and the raw BVN found in none of the
// answers, the database's rows, the events, the webhooks, the logs and the workflow history.
import { randomInt, randomUUID } from 'node:crypto';
import type { LightMyRequestResponse } from 'fastify';
import { afterAll, describe, expect, it } from 'vitest';
import { bvnHash, bvnKeysFrom } from '../../src/identity/bvn.ts';
import { createTenant } from '../../src/tenants/tenants.ts';
import { bvnVerificationWorkflowId } from '../../workflows/identity/definitions.ts';
import { auth, newSigningSecret, registerEndpoint } from '../support/api.ts';
import { TEST_BVN_SECRET } from '../support/app.ts';
import { eventually } from '../support/eventually.ts';
import { recordHistory } from '../support/histories.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { everyRow, expectFoundNowhere, expectIdempotencyRecordKeepsNoSecret, historyText } from '../support/secrecy.ts';
import { type GatewayStack, startWebhookFanout, useGatewayStack } from '../support/stack.ts';

const TASK_QUEUE = `bvn-verification-${process.pid}`;

let stack: GatewayStack;
useGatewayStack({ taskQueue: TASK_QUEUE }, (started) => {
  stack = started;
});
afterAll(async () => {
  await stack?.bank.store.setDown('bvn', false);
});

let tenants: { a: string; b: string; aId: string } | undefined;
async function keys() {
  if (!tenants) {
    const em = stack.db.orm.em.fork();
    const a = await createTenant(em, { name: 'bvn A', features: ['identity_customers'] });
    const b = await createTenant(em, { name: 'bvn B', features: ['identity_customers'] });
    tenants = { a: a.key.api_key, b: b.key.api_key, aId: a.tenant.tenant_id };
  }
  return tenants;
}

/** A new customer of tenant A (or another key's tenant); its id. */
async function newCustomer(firstName = 'Ada', lastName = 'Obi', key?: string): Promise<string> {
  const response = await stack.app.inject({
    method: 'POST',
    url: '/api/v1/identity/customers',
    headers: auth(key ?? (await keys()).a),
    payload: { external_reference: `ref-${randomUUID()}`, first_name: firstName, last_name: lastName },
  });
  expect(response.statusCode).toBe(201);
  return response.json().data.id as string;
}

async function verify(
  customerId: string,
  body: unknown,
  options: { key?: string; headers?: Record<string, string> } = {},
): Promise<LightMyRequestResponse> {
  return stack.app.inject({
    method: 'POST',
    url: `/api/v1/identity/customers/${customerId}/bvn-verification`,
    headers: auth(options.key ?? (await keys()).a, options.headers),
    payload: body as object,
  });
}

async function customer(customerId: string, key?: string) {
  const response = await stack.app.inject({
    method: 'GET',
    url: `/api/v1/identity/customers/${customerId}`,
    headers: auth(key ?? (await keys()).a),
  });
  expect(response.statusCode).toBe(200);
  return response.json().data as Record<string, unknown>;
}

/** The customer once its verification has ended (kyc_status no longer pending). */
function settled(customerId: string) {
  return eventually(async () => {
    const current = await customer(customerId);
    return current.kyc_status !== 'pending' && current;
  });
}

async function eventsOf(type: string, customerId: string) {
  const response = await stack.app.inject({
    method: 'GET',
    url: `/api/v1/events?type=${type}&limit=100`,
    headers: auth((await keys()).a),
  });
  return (response.json().data.items as { type: string; data: Record<string, unknown> }[]).filter(
    (event) => event.data.id === customerId,
  );
}

/** An 11-digit BVN none of the sandbox's magic ones (and no other test's). */
function ordinaryBvn(): string {
  return `5${String(randomInt(0, 1e9)).padStart(9, '0')}7`;
}

const bvnRows = (customerId: string) =>
  stack.db.orm.em.fork().execute<
    {
      id: string;
      status: string;
      failure_reason: string | null;
      bvn_hash: string;
      bvn_last4: string;
      sealed: boolean;
    }[]
  >(
    `select id, status, failure_reason, bvn_hash, bvn_last4, bvn_ciphertext is not null as sealed
         from bvn_verifications where customer_id = ? order by created_at`,
    [customerId],
  );

describe('POST /api/v1/identity/customers/{id}/bvn-verification', () => {
  it.each([
    {
      name: '22222222222 (matches any name)',
      bvn: '22222222222',
      first: 'Zebedee',
      last: 'Quuxley',
      status: 'verified',
      reason: null,
    },
    {
      name: '00000000000 (not found)',
      bvn: '00000000000',
      first: 'Ada',
      last: 'Obi',
      status: 'verification_failed',
      reason: 'bvn_not_found',
    },
    {
      name: '11111111111 (never matches)',
      bvn: '11111111111',
      first: 'Ada',
      last: 'Obi',
      status: 'verification_failed',
      reason: 'name_mismatch',
    },
    {
      name: 'an ordinary BVN, its holder named in another case',
      bvn: '12345678901',
      first: 'ada',
      last: 'OBI',
      status: 'verified',
      reason: null,
    },
  ])(
    '$name: 202 pending, then kyc_status $status ($reason) with its event',
    async ({ bvn, first, last, status, reason }) => {
      const id = await newCustomer(first, last);
      const response = await verify(id, { bvn });
      expect(response.statusCode).toBe(202);
      const { data, meta } = response.json();
      expect(data).toEqual({ customer_id: id, verification_id: expect.any(String), status: 'pending' });
      expect(meta).toEqual({ timestamp: expect.any(String), requestId: response.headers['x-request-id'] });

      const after = await settled(id);
      expect(after).toMatchObject({ kyc_status: status, kyc_failure_reason: reason, bvn_last4: bvn.slice(-4) });
      expect(Object.keys(after)).not.toContain('bvn');

      const type = status === 'verified' ? 'identity.customer.verified' : 'identity.customer.verification_failed';
      const other = status === 'verified' ? 'identity.customer.verification_failed' : 'identity.customer.verified';
      const events = await eventsOf(type, id);
      expect(events).toHaveLength(1);
      expect(events[0]!.data).toEqual({ ...after, verification_id: data.verification_id });
      expect(await eventsOf(other, id)).toEqual([]);

      // One workflow per verification, under its business key, ended with the outcome.
      const handle = stack.client.workflow.getHandle(bvnVerificationWorkflowId(id, data.verification_id));
      expect(await handle.result()).toEqual({ status: reason ?? 'verified' });
      const [row] = await bvnRows(id);
      expect(row).toEqual({
        id: data.verification_id,
        status,
        failure_reason: reason,
        bvn_hash: bvnHash(bvnKeysFrom(TEST_BVN_SECRET), bvn),
        bvn_last4: bvn.slice(-4),
        sealed: false,
      });
      if (bvn === '12345678901') recordHistory('bvn-verification-verified', handle.workflowId);
      if (bvn === '11111111111') recordHistory('bvn-verification-name-mismatch', handle.workflowId);
    },
  );

  it.each([
    ['10 digits', { bvn: '1234567890' }, 'bvn'],
    ['12 digits', { bvn: '123456789012' }, 'bvn'],
    ['a number instead of a string', { bvn: 12345678901 }, 'bvn'],
    ['null', { bvn: null }, 'bvn'],
    ['an array', { bvn: ['12345678901'] }, 'bvn'],
    ['no bvn at all', {}, 'bvn'],
    ['an empty string', { bvn: '' }, 'bvn'],
    ['spaces around it', { bvn: ' 12345678901 ' }, 'bvn'],
    ['a letter among the digits', { bvn: '1234567890a' }, 'bvn'],
    ['Arabic-Indic digits', { bvn: '١٢٣٤٥٦٧٨٩٠١' }, 'bvn'],
    ['full-width digits', { bvn: '１２３４５６７８９０１' }, 'bvn'],
    ['SQL', { bvn: "1' OR '1'='1" }, 'bvn'],
    ['markup', { bvn: '<script>alert(1)</script>' }, 'bvn'],
    ['a NUL character', { bvn: '12345678901\u0000' }, 'bvn'],
    ['a line break', { bvn: '12345678901\n' }, 'bvn'],
    ['an unknown field beside it', { bvn: '12345678901', first_name: 'Ada' }, 'first_name'],
  ])(
    'answers 400 VALIDATION_ERROR naming %s, without repeating it, and records nothing',
    async (_name, body, field) => {
      const id = await newCustomer();
      const response = await verify(id, body);
      expect(response.statusCode).toBe(400);
      expect(response.json().error.code).toBe('VALIDATION_ERROR');
      expect(response.json().error.details.fields.map((f: { path: string }) => f.path)).toEqual([field]);
      const submitted = (body as { bvn?: unknown }).bvn;
      if (typeof submitted === 'string' && submitted.length > 3) expect(response.body).not.toContain(submitted.trim());
      expect(await bvnRows(id)).toEqual([]);
      expect((await customer(id)).kyc_status).toBe('unverified');
    },
  );

  it("answers another tenant's customer, and ids that exist nowhere, 404 alike, and leaves it untouched", async () => {
    const { b } = await keys();
    const id = await newCustomer();
    const before = await customer(id);
    const theirs = await verify(id, { bvn: '22222222222' }, { key: b });
    const nowhere = randomUUID();
    const missing = await verify(nowhere, { bvn: '22222222222' }, { key: b });
    expect(theirs.statusCode).toBe(404);
    expect(theirs.json().error).toEqual({
      ...missing.json().error,
      message: missing.json().error.message.replace(nowhere, id),
    });
    expect(theirs.json().error.code).toBe('NOT_FOUND');
    expect((await verify('not-a-uuid', { bvn: '22222222222' })).statusCode).toBe(404);
    expect(await customer(id)).toEqual(before);
    expect(await bvnRows(id)).toEqual([]);
  });

  it('answers 403 FORBIDDEN to a tenant without identity_customers, and to a live key (no live provider)', async () => {
    const em = stack.db.orm.em.fork();
    const plain = await createTenant(em, { name: 'no identity' });
    const id = await newCustomer();
    const forbidden = await verify(id, { bvn: '22222222222' }, { key: plain.key.api_key });
    expect(forbidden.statusCode).toBe(403);
    expect(forbidden.json().error.code).toBe('FORBIDDEN');
    const live = await createTenant(em, { name: 'live identity', features: ['identity_customers'], mode: 'live' });
    const refused = await verify(randomUUID(), { bvn: '22222222222' }, { key: live.key.api_key });
    expect(refused.statusCode).toBe(403);
    expect(refused.json().error.message).toMatch(/live mode has no connector for identity/);
  });

  it('retries through the bank’s outage; meanwhile the same BVN answers the pending verification and another 409; a verified customer is not verified again', async () => {
    const id = await newCustomer('Chidi', 'Okeke');
    const bvn = ordinaryBvn();
    await stack.bank.store.setDown('bvn', true);
    let verificationId: string;
    try {
      const first = await verify(id, { bvn });
      expect(first.statusCode).toBe(202);
      verificationId = first.json().data.verification_id;
      const handle = stack.client.workflow.getHandle(bvnVerificationWorkflowId(id, verificationId));
      // The lookup fails at the bank and is retried by its activity's policy.
      const retrying = await eventually(async () => {
        const activity = (await handle.describe()).raw.pendingActivities?.[0];
        return (activity?.attempt ?? 0) >= 2 && activity;
      });
      expect(retrying.lastFailure?.message).toMatch(/HTTP 503/);
      expect((await customer(id)).kyc_status).toBe('pending');

      const again = await verify(id, { bvn });
      expect(again.statusCode).toBe(202);
      expect(again.json().data).toEqual({ customer_id: id, verification_id: verificationId, status: 'pending' });
      const another = await verify(id, { bvn: '22222222222' });
      expect(another.statusCode).toBe(409);
      expect(another.json().error).toMatchObject({ code: 'CONFLICT', details: { verification_id: verificationId } });
      expect(await bvnRows(id)).toHaveLength(1);
    } finally {
      await stack.bank.store.setDown('bvn', false);
    }
    expect(await settled(id)).toMatchObject({
      kyc_status: 'verified',
      kyc_failure_reason: null,
      bvn_last4: bvn.slice(-4),
    });
    expect(await eventsOf('identity.customer.verified', id)).toHaveLength(1);
    recordHistory('bvn-verification-after-outage', bvnVerificationWorkflowId(id, verificationId));

    const verifiedAgain = await verify(id, { bvn: '22222222222' });
    expect(verifiedAgain.statusCode).toBe(422);
    expect(verifiedAgain.json().error).toMatchObject({
      code: 'FAILED_PRECONDITION',
      details: { kyc_status: 'verified', bvn_last4: bvn.slice(-4) },
    });
    expect(await bvnRows(id)).toHaveLength(1);
  });

  it('lets a customer whose verification failed try again, with a new verification', async () => {
    const id = await newCustomer('Ngozi', 'Eze');
    const failed = await verify(id, { bvn: '11111111111' });
    expect((await settled(id)).kyc_failure_reason).toBe('name_mismatch');
    const retried = await verify(id, { bvn: '22222222222' });
    expect(retried.statusCode).toBe(202);
    expect(retried.json().data.verification_id).not.toBe(failed.json().data.verification_id);
    expect(await settled(id)).toMatchObject({ kyc_status: 'verified', kyc_failure_reason: null, bvn_last4: '2222' });
    expect((await bvnRows(id)).map((row) => [row.status, row.failure_reason])).toEqual([
      ['verification_failed', 'name_mismatch'],
      ['verified', null],
    ]);
  });

  it('replays the first answer to a repeat with the same Idempotency-Key; another BVN under it is 422; the key’s record keeps no plain digest of the BVN', async () => {
    const id = await newCustomer();
    const bvn = ordinaryBvn();
    const key = `bvn-${randomUUID()}`;
    const first = await verify(id, { bvn }, { headers: { 'idempotency-key': key } });
    expect(first.statusCode).toBe(202);
    await settled(id);
    const repeat = await verify(id, { bvn }, { headers: { 'idempotency-key': key } });
    expect(repeat.statusCode).toBe(202);
    expect(repeat.headers['idempotent-replayed']).toBe('true');
    expect(repeat.json().data).toEqual(first.json().data);
    const reused = await verify(id, { bvn: ordinaryBvn() }, { headers: { 'idempotency-key': key } });
    expect(reused.statusCode).toBe(422);
    expect(reused.json().error.code).toBe('IDEMPOTENCY_KEY_REUSED');
    expect(await bvnRows(id)).toHaveLength(1);

    const path = `/api/v1/identity/customers/${id}/bvn-verification`;
    await expectIdempotencyRecordKeepsNoSecret(stack.db.orm, key, { method: 'POST', path, body: { bvn } }, bvn);
  });

  it('keeps the raw BVN out of every answer, database row, event, webhook, log line and the workflow history', async () => {
    const { a } = await keys();
    const receiver: Receiver = await startReceiver();
    const fanout = startWebhookFanout(stack, [0]);
    try {
      const endpoint = await registerEndpoint(stack.app, a, {
        url: `${receiver.url}/bvn`,
        events: ['*'],
        signing_secret: newSigningSecret(),
      });
      expect(endpoint.statusCode).toBe(201);
      const bvn = ordinaryBvn();
      const mismatched = '11111111111';
      const answers: string[] = [];
      const keep = (response: LightMyRequestResponse) => {
        answers.push(response.body);
        return response;
      };

      const id = await newCustomer('Emeka', 'Nwosu');
      // Refused first: a body holding the BVN with one digit more, which errors and logs could echo.
      expect(keep(await verify(id, { bvn: `${bvn}9` })).statusCode).toBe(400);
      expect(keep(await verify(id, { bvn: Number(bvn) })).statusCode).toBe(400);
      const accepted = keep(await verify(id, { bvn }, { headers: { 'idempotency-key': `k-${randomUUID()}` } }));
      expect(accepted.statusCode).toBe(202);
      const verificationId = accepted.json().data.verification_id as string;
      await settled(id);
      const other = await newCustomer('Emeka', 'Nwosu');
      keep(await verify(other, { bvn: mismatched }));
      await settled(other);

      // The endpoint also receives tenant A's earlier tests' events: wait for these two customers' own.
      const delivered = await eventually(() => {
        const seen = receiver.on('/bvn').map((hook) => {
          const event = JSON.parse(hook.body) as { type: string; data: { id?: string } };
          return `${event.type} ${event.data.id}`;
        });
        return (
          seen.includes(`identity.customer.verified ${id}`) &&
          seen.includes(`identity.customer.verification_failed ${other}`) &&
          receiver.on('/bvn')
        );
      });
      keep(await stack.app.inject({ method: 'GET', url: `/api/v1/identity/customers/${id}`, headers: auth(a) }));
      keep(await stack.app.inject({ method: 'GET', url: '/api/v1/events?limit=100', headers: auth(a) }));
      keep(await stack.app.inject({ method: 'GET', url: '/api/v1/webhook-deliveries', headers: auth(a) }));

      const rows = await everyRow(stack.db.orm);
      const em = stack.db.orm.em.fork();
      const events = await em.execute<{ row: string }[]>(
        `select row_to_json(e)::text as row from events e where type like 'identity.customer.%'`,
      );
      expect(events.length).toBeGreaterThanOrEqual(4);

      const historyAll = await historyText(stack.client, bvnVerificationWorkflowId(id, verificationId));
      // The search can see what the history does carry: the verification's ids.
      expect(historyAll).toContain(verificationId);
      expect(historyAll).toContain(id);

      const logs = stack.gateway.logs.map((line) => JSON.stringify(line)).join('\n');
      // The log does carry this customer's requests: its lines were searched, not an empty log.
      expect(logs).toContain(`/api/v1/identity/customers/${id}/bvn-verification`);
      const places = {
        answers: answers.join('\n'),
        rows: rows.join('\n'),
        events: events.map((row) => row.row).join('\n'),
        webhooks: delivered.map((hook) => hook.body).join('\n'),
        logs,
        history: historyAll,
      };
      expectFoundNowhere(places, { 'the BVN': bvn, 'the magic BVN': mismatched });
      // Its last 4 digits are what the customer shows, everywhere.
      expect(places.webhooks).toContain(`"bvn_last4":"${bvn.slice(-4)}"`);
      expect(places.rows).toContain(bvnHash(bvnKeysFrom(TEST_BVN_SECRET), bvn));
    } finally {
      await fanout.stop();
      await receiver.close();
    }
  });
});
