// The console's admin pages over HTTP (decisions §22): webhooks (add an endpoint, a secret made and
// shown once, a test event and its delivery with the attempt and the escaped answer of the tenant's
// server; recover, edit, disable, enable and rotate its secret, decisions §21), API keys (a
// restricted key whose secret works as its scopes say), the team (invite, join with the link,
// change role, remove) and the audit log; roles refused, another tenant's ids 404, hostile strings
// escaped.
import { Webhook } from 'standardwebhooks';
import { describe, expect, it } from 'vitest';
import { auth } from '../support/api.ts';
import { createFundedTenant } from '../support/app.ts';
import { ConsoleClient, member } from '../support/console.ts';
import { eventually } from '../support/eventually.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { type GatewayStack, useGatewayStack } from '../support/stack.ts';

const IMG = '<img src=x onerror=alert(1)>';
const SCRIPT = '"><script>alert(1)</script>';
const HOSTILE = `${IMG}${SCRIPT}`;

let stack: GatewayStack;
let receiver: Receiver;

useGatewayStack(
  { taskQueue: `console-admin-${process.pid}`, webhookScheduleMs: [0, 500, 1_000] },
  async (started) => {
    stack = started;
    receiver = await startReceiver();
  },
  () => receiver.close(),
);

/** Neither hostile string appears raw in the page. */
function expectEscaped(html: string) {
  expect(html).not.toContain(IMG);
  expect(html).not.toContain('<script>alert(1)</script>');
  expect(html).not.toContain('onerror=alert(1)>');
}

async function tenant() {
  const made = await createFundedTenant(stack.db.orm, 1_000_000);
  const join = (role: 'owner' | 'developer' | 'approver' | 'viewer') =>
    member(stack.db.orm, stack.gatewayUrl, made.tenantId, role);
  return { ...made, join };
}

const testId = (html: string, id: string) => [...html.matchAll(new RegExp(`data-testid="${id}"`, 'g'))].length;
const secretOf = (html: string) => /data-testid="new-secret">([^<]+)</.exec(html)?.[1];

describe('console webhooks and events', () => {
  it('adds an endpoint, sends a test event and shows its delivery with the attempt, escaping what the server answered', async () => {
    const { apiKey, join } = await tenant();
    const developer = await join('developer');
    const path = `/hook-${Date.now()}`;
    const url = `${receiver.url}${path}?label=${encodeURIComponent(HOSTILE)}`;
    receiver.plan(
      new URL(url).pathname + new URL(url).search,
      ...Array.from({ length: 5 }, () => ({ status: 200, body: `thanks ${HOSTILE}` })),
    );

    const page = await developer.get('/dashboard/webhooks');
    expect(page.status).toBe(200);
    expect(page.html).toContain('Add endpoint');
    const added = await developer.post('/dashboard/webhooks/endpoints', {
      url,
    });
    expect(added.status, added.html).toBe(201);
    const secret = secretOf(added.html);
    expect(secret).toMatch(/^whsec_/);
    expectEscaped(added.html);
    const endpointId = /\/dashboard\/webhooks\/endpoints\/([0-9a-f-]{36})/.exec(added.html)![1]!;

    // The API's own endpoint route (new): the tenant's key reads it; no secret in it.
    const read = await stack.app.inject({
      method: 'GET',
      url: `/api/v1/webhook-endpoints/${endpointId}`,
      headers: auth(apiKey),
    });
    expect(read.statusCode, read.body).toBe(200);
    expect(read.json().data).toMatchObject({ id: endpointId, events: ['*'], status: 'listening' });
    expect(read.body).not.toContain(secret!);

    const list = await developer.get('/dashboard/webhooks');
    expect(testId(list.html, 'endpoint-row')).toBe(1);
    expectEscaped(list.html);

    const sent = await developer.post(`/dashboard/webhooks/endpoints/${endpointId}/test`);
    expect(sent.status, sent.html).toBe(303);
    expect(sent.location).toBe(`/dashboard/webhooks/endpoints/${endpointId}?notice=test-sent`);
    const endpointPage = await developer.get(sent.location!);
    expect(endpointPage.html).toContain('A test event is on its way');
    expect(testId(endpointPage.html, 'delivery-row')).toBeGreaterThanOrEqual(1);
    expectEscaped(endpointPage.html);

    // The endpoint's own webhook.endpoint.created is delivered to it too ("*"), and its delivery may be
    // queued before or after the test event's (the fan-out's pace): the test event's is found by its type.
    const deliveries = await developer.get(`/dashboard/webhooks/deliveries?endpoint_id=${endpointId}`);
    expect(testId(deliveries.html, 'delivery-row')).toBeGreaterThanOrEqual(1);
    const deliveryId = /\/dashboard\/webhooks\/deliveries\/([0-9a-f-]{36})">webhook\.endpoint\.test</.exec(
      deliveries.html,
    )![1]!;
    const delivery = await eventually(async () => {
      const found = await developer.get(`/dashboard/webhooks/deliveries/${deliveryId}`);
      return testId(found.html, 'attempt') >= 1 && found.html.includes('data-testid="response-body"')
        ? found
        : undefined;
    });
    expect(delivery.html).toContain('webhook.endpoint.test');
    expect(delivery.html).toMatch(/data-testid="delivery-status">succeeded</);
    expect(delivery.html).toContain('thanks &lt;img src=x onerror=alert(1)&gt;&quot;&gt;&lt;script&gt;');
    expectEscaped(delivery.html);

    // The event and its payload.
    const events = await developer.get('/dashboard/events?type=webhook.endpoint.test');
    expect(events.status).toBe(200);
    const eventLink = /\/dashboard\/events\/([0-9a-f-]{36})/.exec(events.html);
    if (eventLink) {
      const event = await developer.get(`/dashboard/events/${eventLink[1]}`);
      expect(event.status).toBe(200);
      expect(event.html).toContain('data-testid="event-payload"');
    }
    const all = await developer.get('/dashboard/events');
    expect(testId(all.html, 'event-row')).toBeGreaterThanOrEqual(1);

    // Replay.
    const replayed = await developer.post(`/dashboard/webhooks/deliveries/${deliveryId}/replay`);
    expect(replayed.status, replayed.html).toBe(303);
    await eventually(async () => receiver.received.filter((hit) => hit.path.startsWith(path)).length >= 2);

    // A viewer sees but cannot act; the API refuses the form anyway.
    const viewer = await join('viewer');
    const seen = await viewer.get(`/dashboard/webhooks/endpoints/${endpointId}`);
    expect(seen.status).toBe(200);
    expect(seen.html).not.toContain('Send test event');
    const refused = await viewer.post('/dashboard/webhooks/endpoints', { url: `${receiver.url}/viewer` });
    expect(refused.status).toBe(403);
    expect((await viewer.post(`/dashboard/webhooks/endpoints/${endpointId}/test`)).status).toBe(403);

    // Another tenant's developer finds none of it.
    const other = await (await tenant()).join('developer');
    expect((await other.get(`/dashboard/webhooks/endpoints/${endpointId}`)).status).toBe(404);
    expect((await other.get(`/dashboard/webhooks/deliveries/${deliveryId}`)).status).toBe(404);
    expect((await other.post(`/dashboard/webhooks/endpoints/${endpointId}/delete`)).status).toBe(404);
    expect((await other.get('/dashboard/webhooks/endpoints/not%20an%20id')).status).toBe(404);

    // Deleting: gone from the list and from the API's endpoint route.
    const deleted = await developer.post(`/dashboard/webhooks/endpoints/${endpointId}/delete`);
    expect(deleted.location).toBe('/dashboard/webhooks?notice=endpoint-deleted');
    const after = await developer.get(deleted.location!);
    expect(after.html).toContain('The endpoint was deleted');
    expect(testId(after.html, 'endpoint-row')).toBe(0);
    expect((await developer.get(`/dashboard/webhooks/endpoints/${endpointId}`)).status).toBe(404);
  });
});

describe('console webhook endpoint lifecycle', () => {
  /** `datetime-local` as the console reads it: Lagos time (UTC+1). */
  const lagosLocal = (at: Date) => new Date(at.getTime() + 3_600_000).toISOString().slice(0, 16);

  it('recovers, edits, disables and enables an endpoint and rotates its secret through the API, each form as its person', async () => {
    const { apiKey, join } = await tenant();
    const developer = await join('developer');
    const path = `/lifecycle-${Date.now()}`;
    // Down through every attempt of the endpoint's first delivery (its own webhook.endpoint.created).
    receiver.plan(path, ...Array.from({ length: 3 }, () => ({ status: 500 })));
    await developer.get('/dashboard/webhooks');
    const added = await developer.post('/dashboard/webhooks/endpoints', { url: `${receiver.url}${path}` });
    expect(added.status, added.html).toBe(201);
    const firstSecret = secretOf(added.html)!;
    const endpointId = /\/dashboard\/webhooks\/endpoints\/([0-9a-f-]{36})/.exec(added.html)![1]!;
    const api = (url: string) => stack.app.inject({ method: 'GET', url, headers: auth(apiKey) });
    await eventually(
      async () =>
        (await api(`/api/v1/webhook-deliveries?endpoint_id=${endpointId}&status=failed`)).json().data.pagination
          .total === 1,
    );

    // Recover since an hour ago: the failed delivery goes again, and arrives.
    const page = await developer.get(`/dashboard/webhooks/endpoints/${endpointId}`);
    for (const form of ['edit', 'disable', 'rotate', 'recover']) expect(page.html).toContain(`/${form}"`);
    const recovered = await developer.post(`/dashboard/webhooks/endpoints/${endpointId}/recover`, {
      since: lagosLocal(new Date(Date.now() - 3_600_000)),
    });
    expect(recovered.status, recovered.html).toBe(303);
    expect(recovered.location).toBe(`/dashboard/webhooks/endpoints/${endpointId}?notice=recovering&recovering=1`);
    expect((await developer.get(recovered.location!)).html).toContain('Delivering again: 1 delivery since then');
    await eventually(() => receiver.on(path).length === 4);
    // More than 14 days back: the API's refusal, shown.
    const tooOld = await developer.post(`/dashboard/webhooks/endpoints/${endpointId}/recover`, {
      since: lagosLocal(new Date(Date.now() - 15 * 24 * 3_600_000)),
    });
    expect(tooOld.status).toBe(400);
    expect(tooOld.html).toContain('must be at most 14 days ago');

    // Edit: a new URL and one event.
    await developer.get(`/dashboard/webhooks/endpoints/${endpointId}`);
    const edited = await developer.post(`/dashboard/webhooks/endpoints/${endpointId}/edit`, {
      url: `${receiver.url}${path}-moved`,
      events: ['transfer.settled', 'webhook.endpoint.test'],
    });
    expect(edited.status, edited.html).toBe(303);
    const editedPage = await developer.get(edited.location!);
    expect(editedPage.html).toContain('The endpoint was changed');
    expect(editedPage.html).toContain(`${receiver.url}${path}-moved`);
    expect((await api(`/api/v1/webhook-endpoints/${endpointId}`)).json().data).toMatchObject({
      url: `${receiver.url}${path}-moved`,
      events: ['transfer.settled', 'webhook.endpoint.test'],
    });
    expect(
      (await developer.post(`/dashboard/webhooks/endpoints/${endpointId}/edit`, { url: 'http://10.0.0.8/x' })).status,
    ).toBe(400);

    // Disable, then enable.
    const disabled = await developer.post(`/dashboard/webhooks/endpoints/${endpointId}/disable`);
    expect(disabled.location).toBe(`/dashboard/webhooks/endpoints/${endpointId}?notice=endpoint-disabled`);
    const disabledPage = await developer.get(disabled.location!);
    expect(disabledPage.html).toMatch(/data-testid="endpoint-status">disabled</);
    expect(disabledPage.html).toContain('disabled by the tenant');
    expect(disabledPage.html).toContain('Enable endpoint');
    expect(disabledPage.html).not.toContain('Send test event');
    expect((await api(`/api/v1/webhook-endpoints/${endpointId}`)).json().data.enabled).toBe(false);
    const enabled = await developer.post(`/dashboard/webhooks/endpoints/${endpointId}/enable`);
    expect(enabled.location).toBe(`/dashboard/webhooks/endpoints/${endpointId}?notice=endpoint-enabled`);
    expect((await api(`/api/v1/webhook-endpoints/${endpointId}`)).json().data).toMatchObject({
      status: 'listening',
      enabled: true,
    });

    // Rotate with a two-hour overlap: the new secret shown once, and both secrets sign a test event.
    await developer.get(`/dashboard/webhooks/endpoints/${endpointId}`);
    const rotated = await developer.post(`/dashboard/webhooks/endpoints/${endpointId}/rotate`, { overlap_hours: '2' });
    expect(rotated.status, rotated.html).toBe(200);
    const secondSecret = secretOf(rotated.html)!;
    expect(secondSecret).toMatch(/^whsec_/);
    expect(secondSecret).not.toBe(firstSecret);
    expect(rotated.html).toContain('still signs beside the new one until');
    const expires = Date.parse(
      (await api(`/api/v1/webhook-endpoints/${endpointId}`)).json().data.previous_secret_expires_at,
    );
    expect(Math.abs(expires - Date.now() - 2 * 3_600_000)).toBeLessThan(60_000);
    expect((await developer.get(`/dashboard/webhooks/endpoints/${endpointId}`)).html).not.toContain(secondSecret);
    expect((await developer.post(`/dashboard/webhooks/endpoints/${endpointId}/test`)).status).toBe(303);
    const hook = await eventually(() => receiver.on(`${path}-moved`)[0]);
    for (const secret of [firstSecret, secondSecret]) {
      expect(new Webhook(secret).verify(hook.body, hook.headers as Record<string, string>)).toMatchObject({
        type: 'webhook.endpoint.test',
      });
    }
    const refusedHours = await developer.post(`/dashboard/webhooks/endpoints/${endpointId}/rotate`, {
      overlap_hours: '100',
    });
    expect(refusedHours.status).toBe(400);

    // A viewer sees no form and is refused by the API; another tenant's developer finds nothing.
    const viewer = await join('viewer');
    const seen = await viewer.get(`/dashboard/webhooks/endpoints/${endpointId}`);
    expect(seen.html).not.toContain('Rotate secret');
    for (const action of ['disable', 'rotate', 'recover', 'edit']) {
      expect((await viewer.post(`/dashboard/webhooks/endpoints/${endpointId}/${action}`)).status).toBe(403);
    }
    const other = await (await tenant()).join('developer');
    await other.get('/dashboard/webhooks');
    expect((await other.post(`/dashboard/webhooks/endpoints/${endpointId}/disable`)).status).toBe(404);
    expect((await api(`/api/v1/webhook-endpoints/${endpointId}`)).json().data.status).toBe('listening');
  });
});

describe('console API keys', () => {
  it('makes a restricted key whose secret works as its scopes say, rolls and revokes it; a viewer is refused', async () => {
    const { join } = await tenant();
    const developer = await join('developer');
    const page = await developer.get('/dashboard/keys');
    expect(page.status).toBe(200);
    expect(page.html).toContain('Make key');

    const made = await developer.post('/dashboard/keys', {
      name: `reports ${HOSTILE}`,
      scopes: ['read'],
      allowed_ips: '127.0.0.1\n::1',
    });
    expect(made.status, made.html).toBe(201);
    expectEscaped(made.html);
    const secret = secretOf(made.html)!;
    expect(secret).toBeTruthy();
    const wallet = await fetch(`${stack.gatewayUrl}/api/v1/wallet`, { headers: auth(secret) });
    expect(wallet.status).toBe(200);
    const transfer = await fetch(`${stack.gatewayUrl}/api/v1/transfers`, {
      method: 'POST',
      headers: { ...auth(secret), 'content-type': 'application/json' },
      body: JSON.stringify({}),
    });
    expect(transfer.status).toBe(403);

    const list = await developer.get('/dashboard/keys');
    expectEscaped(list.html);
    expect(list.html).toContain('reports &lt;img src=x onerror=alert(1)&gt;');
    expect(list.html).toContain('127.0.0.1, ::1');
    const keyId = new RegExp(`/dashboard/keys/([0-9a-f-]{36})/roll`).exec(list.html)![1]!;

    const rolled = await developer.post(`/dashboard/keys/${keyId}/roll`);
    expect(rolled.status, rolled.html).toBe(201);
    const next = secretOf(rolled.html)!;
    expect(next).toBeTruthy();
    expect(next).not.toBe(secret);
    expect((await fetch(`${stack.gatewayUrl}/api/v1/wallet`, { headers: auth(next) })).status).toBe(200);

    const revoked = await developer.post(`/dashboard/keys/${keyId}/revoke`);
    expect(revoked.location).toBe('/dashboard/keys?notice=key-revoked');
    // A revoked key stops within the key cache's second.
    await eventually(
      async () => (await fetch(`${stack.gatewayUrl}/api/v1/wallet`, { headers: auth(next) })).status === 401,
    );

    const viewer = await join('viewer');
    expect((await viewer.get('/dashboard/keys')).status).toBe(403);
    expect((await viewer.post('/dashboard/keys', { name: 'x', scopes: ['read'] })).status).toBe(403);

    const other = await (await tenant()).join('developer');
    expect((await other.get('/dashboard/keys')).status).toBe(200);
    expect((await other.post(`/dashboard/keys/${keyId}/roll`)).status).toBe(404);
  });
});

describe('console team and audit log', () => {
  it('an owner invites, the link joins, a role change ends the session, removal; the audit log names the person', async () => {
    const { ownerTenantId, join } = await tenant();
    const owner = await join('owner');
    const team = await owner.get('/dashboard/team');
    expect(team.status).toBe(200);
    expect(testId(team.html, 'member-row')).toBe(1);

    const email = `new-${Date.now()}@example.com`;
    const invited = await owner.post('/dashboard/team/invitations', { email, role: 'developer' });
    expect(invited.status, invited.html).toBe(201);
    const link = /data-testid="invitation-link">([^<]+)</.exec(invited.html)![1]!;
    expect((await owner.get('/dashboard/team')).html).toContain('data-testid="invitation-row"');
    const taken = await owner.post('/dashboard/team/invitations', { email: owner.email, role: 'viewer' });
    expect(taken.status).toBe(409);
    expect((await owner.post('/dashboard/team/invitations', { email: 'nope', role: 'viewer' })).status).toBe(400);

    const newcomer = new ConsoleClient(stack.gatewayUrl);
    await newcomer.join(link, email);
    expect((await newcomer.get('/dashboard/webhooks')).status).toBe(200);
    const withTwo = await owner.get('/dashboard/team');
    expect(testId(withTwo.html, 'member-row')).toBe(2);
    const userId = new RegExp(`/dashboard/team/([0-9a-f-]{36})/role`, 'g');
    const ids = [...withTwo.html.matchAll(userId)].map((match) => match[1]!);
    const newcomerId = ids.find((id) => withTwo.html.indexOf(id) > withTwo.html.indexOf(email))!;

    // The newcomer (a developer) may not change the team.
    expect(
      (await newcomer.post('/dashboard/team/invitations', { email: 'x@example.com', role: 'viewer' })).status,
    ).toBe(403);

    const changed = await owner.post(`/dashboard/team/${newcomerId}/role`, { role: 'viewer' });
    expect(changed.location).toBe('/dashboard/team?notice=role-changed');
    const ended = await newcomer.get('/dashboard/webhooks');
    expect(ended.status).toBe(303);
    expect(ended.location).toMatch(/^\/dashboard\/sign-in/);
    await newcomer.signIn();
    expect((await newcomer.get('/dashboard/team')).html).toMatch(/\(viewer\)/);
    expect((await newcomer.post(`/dashboard/team/${newcomerId}/remove`)).status).toBe(403);

    // The last owner cannot leave.
    const ownerId = ids.find((id) => id !== newcomerId)!;
    expect((await owner.post(`/dashboard/team/${ownerId}/remove`)).status).toBe(409);

    const removed = await owner.post(`/dashboard/team/${newcomerId}/remove`);
    expect(removed.location).toBe('/dashboard/team?notice=removed');
    expect((await newcomer.get('/dashboard/team')).status).toBe(303);
    expect(testId((await owner.get('/dashboard/team')).html, 'member-row')).toBe(1);

    // Another tenant's owner cannot touch this member.
    const stranger = await member(stack.db.orm, stack.gatewayUrl, (await tenant()).ownerTenantId, 'owner');
    expect((await stranger.get('/dashboard/team')).status).toBe(200);
    expect((await stranger.post(`/dashboard/team/${ownerId}/role`, { role: 'viewer' })).status).toBe(404);
    // An id that is no uuid is no member either (never a database error).
    for (const bogus of ['not-a-uuid', '1', 'x'.repeat(100)]) {
      expect((await stranger.post(`/dashboard/team/${bogus}/remove`)).status).toBe(404);
      expect((await stranger.post(`/dashboard/team/${bogus}/role`, { role: 'viewer' })).status).toBe(404);
    }
    expect(ownerTenantId).toBeTruthy();

    // A key made in the console, then the audit log: both actions with the owner's email.
    expect((await owner.post('/dashboard/keys', { name: 'ci', scopes: ['read'] })).status).toBe(201);
    const audit = await owner.get('/dashboard/audit-log');
    expect(audit.status).toBe(200);
    expect(testId(audit.html, 'audit-row')).toBeGreaterThanOrEqual(4);
    expect(audit.html).toContain('team.invited');
    expect(audit.html).toContain('api_key.created');
    expect(audit.html).toContain(`user: ${owner.email}`);
    const invitedOnly = await owner.get('/dashboard/audit-log?action=team.invited');
    expect(invitedOnly.html).not.toContain('api_key.created</td>');
    expect(invitedOnly.html).toContain('team.invited</td>');

    const viewer = await join('viewer');
    expect((await viewer.get('/dashboard/team')).status).toBe(200);
    expect((await viewer.get('/dashboard/team')).html).not.toContain('>Invite</button>');
    expect((await viewer.post('/dashboard/team/invitations', { email: 'v@example.com', role: 'viewer' })).status).toBe(
      403,
    );
  });
});
