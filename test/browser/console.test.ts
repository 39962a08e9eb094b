// The tenant console (decisions §22) in a real Chromium, as its people use it: joining through an
// invitation with TOTP, signing in and out, forms without their CSRF token refused, never framed,
// an account locked after failed sign-ins, tenant-controlled text shown as text, each role doing
// its job, every page accessible (axe-core), and the screenshots of docs/console/.
import { randomUUID } from 'node:crypto';
import { type Server, createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Page } from 'playwright-core';
import { describe, expect, it } from 'vitest';
import { auth, newSigningSecret, transferBody } from '../support/api.ts';
import { type FundedTenant, createFundedTenant } from '../support/app.ts';
import {
  Person,
  cookieOf,
  expectAccessible,
  joinInBrowser,
  screenshot,
  signInInBrowser,
  signOutInBrowser,
  useBrowser,
} from '../support/browser.ts';
import { member, inviteLink } from '../support/console.ts';
import { eventually } from '../support/eventually.ts';
import { type Receiver, startReceiver } from '../support/receiver.ts';
import { useGatewayStack } from '../support/stack.ts';
import { totpCode } from '../../src/console/secrets.ts';

type Role = 'owner' | 'developer' | 'approver' | 'viewer';

/** What a hostile tenant (or its customers) may put in any string the console shows. */
const IMG = '<img src=x onerror="window.__xss=1">';
const SCRIPT = '"><script>window.__xss=1</script>';
/** Webhook answers: the XSS receiver's path answers hostile HTML. */
const HOSTILE_PATH = '/hostile';

let receiver: Receiver;
const stack = useGatewayStack(
  { taskQueue: `console-browser-${process.pid}`, webhookScheduleMs: [100, 200], bank: { completionDelayMs: 50 } },
  async () => {
    receiver = await startReceiver({
      answer: (request) =>
        request.path.startsWith(HOSTILE_PATH)
          ? { status: 200, headers: { 'content-type': 'text/html' }, body: `${IMG}${SCRIPT}` }
          : { status: 200, body: 'ok' },
    });
  },
  () => receiver.close(),
);
const shared = useBrowser();

const WALLET = 100_000_000;
/** The policy holds transfers above ₦50,000; the others go straight to the bank. */
const HOLD_ABOVE = 5_000_000;

const call = async (method: 'GET' | 'POST' | 'PUT' | 'DELETE', url: string, key: string, payload?: object) => {
  const response = await stack.app.inject({
    method,
    url,
    headers: auth(key),
    ...(payload === undefined ? {} : { payload }),
  });
  expect(response.statusCode, `${method} ${url}: ${response.body}`).toBeLessThan(300);
  return response.json().data;
};

const email = (role: string) => `${role}-${randomUUID().slice(0, 8)}@example.com`;

const newPage = () => shared.newPage({ baseURL: stack.gatewayUrl });

/** The file's tenant, with its policy: made once. */
let tenantMade: Promise<FundedTenant> | undefined;
function tenant(): Promise<FundedTenant> {
  tenantMade ??= (async () => {
    const made = await createFundedTenant(stack.db.orm, WALLET, 'Console browser tenant');
    await call('PUT', '/api/v1/transfer-policy', made.apiKey, {
      approval: { above_minor: HOLD_ABOVE, new_recipient: false, every_transfer: false },
      approval_expires_in_hours: 24,
      saved_recipients_only: false,
      live_keys_need_ip_allow_list: false,
    });
    return made;
  })();
  return tenantMade;
}

/** Signed-in people of the tenant, one per role, each with their own browser context. */
const people = new Map<Role, Promise<{ person: Person; page: Page }>>();
function signedIn(role: Role): Promise<{ person: Person; page: Page }> {
  let made = people.get(role);
  if (!made) {
    made = (async () => {
      const person = new Person(email(role));
      const link = await inviteLink(stack.db.orm, stack.gatewayUrl, (await tenant()).tenantId, person.email, role);
      const page = await newPage();
      await joinInBrowser(page, link, person);
      return { person, page };
    })();
    people.set(role, made);
  }
  return made;
}

/** Opens a console page: its answer's status. */
async function open(page: Page, path: string): Promise<number> {
  const response = await page.goto(path);
  return response?.status() ?? 0;
}

/** Posts a form from inside the page, as its own forms post: with the page's CSRF token unless `csrf` is false. */
async function postForm(page: Page, action: string, fields: Record<string, string>, csrf = true): Promise<number> {
  const [answer] = await Promise.all([
    page.waitForResponse((response) => response.request().method() === 'POST'),
    // The next document's load (after any redirect), registered before the form goes.
    page.waitForEvent('load'),
    page.evaluate(
      ({ action, fields, csrf }) => {
        // In the page (no DOM types here: the project compiles for Node).
        const document = (globalThis as any).document;
        const form = document.createElement('form');
        form.method = 'post';
        form.action = action;
        const token = document.querySelector('input[name=_csrf]')?.value ?? '';
        for (const [name, value] of Object.entries(csrf ? { _csrf: token, ...fields } : fields)) {
          const input = document.createElement('input');
          input.type = 'hidden';
          input.name = name;
          input.value = value;
          form.append(input);
        }
        document.body.append(form);
        form.submit();
      },
      { action, fields, csrf },
    ),
  ]);
  return answer.status();
}

/** The page shows every string as text: nothing it holds ran or became an element. */
async function expectShownAsText(page: Page, ...strings: string[]): Promise<void> {
  expect(await page.evaluate(() => (globalThis as any).__xss)).toBeUndefined();
  expect(await page.locator('img[src=x]').count()).toBe(0);
  expect(await page.locator('script').count()).toBe(0);
  const text = (await page.locator('body').textContent()) ?? '';
  for (const value of strings) {
    // Shown as itself, or inside JSON (metadata) with its quotes escaped.
    expect([text.includes(value), text.includes(JSON.stringify(value).slice(1, -1))], value).toContain(true);
  }
}

async function transfer(key: string, fields: Record<string, unknown> = {}) {
  return call(
    'POST',
    '/api/v1/transfers',
    key,
    transferBody('console test', { reference: `cb-${randomUUID().slice(0, 8)}`, ...fields }),
  );
}

/** The tenant's records with hostile strings in every field it controls: made once. */
let worldMade: Promise<World> | undefined;
interface World {
  transferId: string;
  recipientId: string;
  virtualAccountId: string;
  endpointId: string;
  endpointUrl: string;
  deliveryId: string;
  keyName: string;
  cardId: string | undefined;
  eventId: string;
  batchId: string;
}
function world(): Promise<World> {
  worldMade ??= (async () => {
    const { apiKey } = await tenant();
    const endpoint = await call('POST', '/api/v1/webhook-endpoints', apiKey, {
      url: `${receiver.url}${HOSTILE_PATH}?q=<script>window.__xss=1</script>`,
      events: ['*'],
      signing_secret: newSigningSecret(),
    });
    const sent = await transfer(apiKey, {
      amount_minor: 250_000,
      narration: IMG,
      metadata: { note: SCRIPT, other: IMG },
    });
    const recipient = await call('POST', '/api/v1/recipients', apiKey, {
      bank_code: '044',
      account_number: '2220001111',
      label: `${IMG}${SCRIPT}`,
    });
    const account = await call('POST', '/api/v1/virtual-accounts', apiKey, {
      customer_id: SCRIPT,
      account_name: IMG,
    });
    const keyName = `${IMG}${SCRIPT}`.slice(0, 64);
    await call('POST', '/api/v1/api-keys', apiKey, { name: keyName, scopes: ['read'] });
    const card = await stack.app.inject({
      method: 'POST',
      url: '/api/v1/cards',
      headers: auth(apiKey),
      payload: { customer_id: 'console-customer' },
    });
    const delivery = await eventually(async () => {
      const list = await call('GET', `/api/v1/webhook-deliveries?endpoint_id=${endpoint.id}`, apiKey);
      return list.items.find((item: any) => item.attempts.length >= 1);
    });
    const events = await call('GET', '/api/v1/events', apiKey);
    const batch = await call('POST', '/api/v1/transfers/bulk', apiKey, {
      batch_reference: `console-${randomUUID().slice(0, 8)}`,
      transfers: [1, 2].map((n) => ({
        amount_minor: 100_000 * n,
        recipient_account: '0123456789',
        recipient_bank_code: '058',
        narration: IMG,
        reference: `console-batch-${randomUUID().slice(0, 8)}-${n}`,
      })),
    });
    return {
      batchId: batch.id,
      transferId: sent.id,
      recipientId: recipient.id,
      virtualAccountId: account.id,
      endpointId: endpoint.id,
      endpointUrl: endpoint.url,
      deliveryId: delivery.id,
      keyName,
      cardId: card.statusCode < 300 ? card.json().data.id : undefined,
      eventId: events.items[0].id,
    };
  })();
  return worldMade;
}

describe('signing in', () => {
  it('an invited owner joins with a password and TOTP, signs out, signs in again; a wrong code is refused', async () => {
    const { tenantId } = await tenant();
    const person = new Person(email('owner'));
    const link = await inviteLink(stack.db.orm, stack.gatewayUrl, tenantId, person.email, 'owner');
    const page = await newPage();
    await joinInBrowser(page, link, person);
    expect(new URL(page.url()).pathname).toBe('/dashboard');
    expect(await page.locator('h1').textContent()).toBe('Overview');
    expect(await page.locator('.who').textContent()).toContain(person.email);

    await signOutInBrowser(page);
    expect(await page.getByRole('status').textContent()).toContain('You have signed out');
    expect(await signInInBrowser(page, person)).toBe(303);
    expect(new URL(page.url()).pathname).toBe('/dashboard');

    await signOutInBrowser(page);
    const stale = totpCode(person.totpSecret!, Date.now() - 10 * 60_000);
    expect(await signInInBrowser(page, person, { code: stale })).toBe(401);
    expect(await page.getByRole('alert').textContent()).toContain('That email, password or code is not right');
    expect(new URL(page.url()).pathname).toBe('/dashboard/sign-in');
    expect(await page.locator('.who').count()).toBe(0);
  });

  it('a session that ended at sign-out opens nothing again, in a browser or by hand', async () => {
    const { tenantId } = await tenant();
    const person = new Person(email('viewer'));
    const page = await newPage();
    await joinInBrowser(
      page,
      await inviteLink(stack.db.orm, stack.gatewayUrl, tenantId, person.email, 'viewer'),
      person,
    );
    const session = await cookieOf(page.context(), 'gw_console');
    expect(session).toBeTruthy();
    await signOutInBrowser(page);

    const other = await newPage();
    await other
      .context()
      .addCookies([{ name: 'gw_console', value: session!, domain: '127.0.0.1', path: '/dashboard', httpOnly: true }]);
    await other.goto('/dashboard');
    expect(new URL(other.url()).pathname).toBe('/dashboard/sign-in');
    expect(await other.locator('#email').count()).toBe(1);

    const byHand = await fetch(`${stack.gatewayUrl}/dashboard`, {
      redirect: 'manual',
      headers: { cookie: `gw_console=${session}` },
    });
    expect(byHand.status).toBe(303);
    expect(byHand.headers.get('location')).toMatch(/^\/dashboard\/sign-in/);
  });
});

describe('forms and frames', () => {
  it('a form posted without its CSRF token is refused with a 403 page, and nothing changes', async () => {
    const { page } = await signedIn('owner');
    await open(page, '/dashboard');
    // The sign-out button, its form's token taken away: refused, still signed in.
    await page.evaluate(() => (globalThis as any).document.querySelector('form.sign-out input[name=_csrf]')?.remove());
    const [signOut] = await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'POST'),
      page.waitForEvent('load'),
      page.getByRole('button', { name: 'Sign out' }).click(),
    ]);
    expect(signOut.status()).toBe(403);
    expect(await page.locator('main').textContent()).toContain('CSRF check failed');
    // The mode switch, posted without a token: refused, still in test mode.
    expect(await postForm(page, '/dashboard/mode', { mode: 'live', back: '/dashboard' }, false)).toBe(403);
    expect(await open(page, '/dashboard')).toBe(200);
    expect(await page.locator('.who').count()).toBe(1);
    expect(await page.locator('.badge.test').textContent()).toBe('Test data');
  });

  it('is never framed: the headers say so and Chromium shows nothing of the console in another site’s frame', async () => {
    const { page } = await signedIn('owner');
    const cookie = `gw_console=${await cookieOf(page.context(), 'gw_console')}`;
    for (const [path, headers] of [
      ['/dashboard/sign-in', {}],
      ['/dashboard', { cookie }],
    ] as const) {
      const response = await fetch(`${stack.gatewayUrl}${path}`, { redirect: 'manual', headers });
      expect(response.status, path).toBe(200);
      expect(response.headers.get('content-security-policy'), path).toContain("frame-ancestors 'none'");
      expect(response.headers.get('x-frame-options'), path).toBe('DENY');
    }

    const framing: Server = createServer((_request, response) => {
      response.writeHead(200, { 'content-type': 'text/html' });
      response.end(
        `<!doctype html><title>Another site</title><iframe id="victim" src="${stack.gatewayUrl}/dashboard/sign-in"></iframe>`,
      );
    });
    await new Promise<void>((done) => framing.listen(0, '127.0.0.1', done));
    try {
      const attacker = await shared.newPage();
      const refusals: string[] = [];
      attacker.on('console', (message) => refusals.push(message.text()));
      await attacker.goto(`http://127.0.0.1:${(framing.address() as AddressInfo).port}/`);
      const frame = await (await attacker.locator('#victim').elementHandle()).contentFrame();
      expect(frame).not.toBeNull();
      expect(frame!.url()).not.toBe(`${stack.gatewayUrl}/dashboard/sign-in`);
      expect(await frame!.locator('#email').count()).toBe(0);
      await eventually(() => refusals.some((text) => /frame-ancestors|Refused to display|X-Frame-Options/i.test(text)));
      await attacker.context().close();
    } finally {
      await new Promise((done) => framing.close(done));
    }
  });
});

describe('failed sign-ins', () => {
  it('50 wrong passwords lock the account, even against the right ones; another account signs in from the same address', async () => {
    const { tenantId } = await tenant();
    const victim = await member(stack.db.orm, stack.gatewayUrl, tenantId, 'approver');
    for (let attempt = 0; attempt < 50; attempt++) {
      const refused = await victim.signIn(victim.email, `wrong password number ${attempt}`, '000000');
      expect(refused.status).toBe(401);
    }
    const page = await newPage();
    const person = new Person(victim.email);
    expect(await signInInBrowser(page, person, { code: await victim.code() })).toBe(401);
    expect(await page.getByRole('alert').textContent()).toContain('the account is locked');

    const other = new Person(email('developer'));
    const otherPage = await newPage();
    await joinInBrowser(
      otherPage,
      await inviteLink(stack.db.orm, stack.gatewayUrl, tenantId, other.email, 'developer'),
      other,
    );
    await signOutInBrowser(otherPage);
    expect(await signInInBrowser(otherPage, other)).toBe(303);
    expect(new URL(otherPage.url()).pathname).toBe('/dashboard');
  });
});

describe('tenant-controlled text is shown as text', () => {
  it('a transfer’s narration and metadata', async () => {
    const { page } = await signedIn('owner');
    const { transferId } = await world();
    expect(await open(page, `/dashboard/transfers/${transferId}`)).toBe(200);
    await expectShownAsText(page, IMG, SCRIPT);
    expect(await open(page, '/dashboard/transfers')).toBe(200);
    await expectShownAsText(page);
  });

  it('a recipient’s label', async () => {
    const { page } = await signedIn('owner');
    await world();
    expect(await open(page, '/dashboard/recipients')).toBe(200);
    await expectShownAsText(page, IMG, SCRIPT);
  });

  it('a webhook endpoint’s URL', async () => {
    const { page } = await signedIn('owner');
    const { endpointId, endpointUrl } = await world();
    expect(await open(page, '/dashboard/webhooks')).toBe(200);
    await expectShownAsText(page, endpointUrl);
    expect(await open(page, `/dashboard/webhooks/endpoints/${endpointId}`)).toBe(200);
    await expectShownAsText(page, endpointUrl);
  });

  it('an API key’s name', async () => {
    const { page } = await signedIn('owner');
    const { keyName } = await world();
    expect(await open(page, '/dashboard/keys')).toBe(200);
    await expectShownAsText(page, keyName);
  });

  it('a virtual account’s name and customer', async () => {
    const { page } = await signedIn('owner');
    const { virtualAccountId } = await world();
    expect(await open(page, '/dashboard/virtual-accounts')).toBe(200);
    await expectShownAsText(page, IMG);
    expect(await open(page, `/dashboard/virtual-accounts/${virtualAccountId}`)).toBe(200);
    await expectShownAsText(page, IMG, SCRIPT);
  });

  it('a webhook delivery’s response body', async () => {
    const { page } = await signedIn('owner');
    const { deliveryId } = await world();
    expect(await open(page, `/dashboard/webhooks/deliveries/${deliveryId}`)).toBe(200);
    await expectShownAsText(page, `${IMG}${SCRIPT}`);
  });
});

/** A transfer the policy holds, made with a key that may only make transfers. */
async function heldTransfer(): Promise<string> {
  const { apiKey } = await tenant();
  const maker = await call('POST', '/api/v1/api-keys', apiKey, {
    name: 'payouts',
    scopes: ['transfers:write', 'read'],
  });
  const held = await transfer(maker.secret, { amount_minor: HOLD_ABOVE + 1_000_000 });
  expect(held.approval).toMatchObject({ status: 'required' });
  return held.id;
}

describe('each role at its work', () => {
  it('a viewer sees the queue without an Approve button, and posting one anyway is refused', async () => {
    const transferId = await heldTransfer();
    const owner = (await signedIn('owner')).page;
    expect(await open(owner, '/dashboard/approvals')).toBe(200);
    const row = owner.locator(`[data-testid="approval-row"][data-id="${transferId}"]`);
    await row.waitFor();
    const action = await row.getByRole('button', { name: 'Approve' }).evaluate((button) => (button as any).form.action);

    const { page } = await signedIn('viewer');
    expect(await open(page, '/dashboard/approvals')).toBe(200);
    expect(await page.locator(`[data-testid="approval-row"][data-id="${transferId}"]`).count()).toBe(1);
    expect(await page.getByRole('button', { name: 'Approve' }).count()).toBe(0);
    expect(await page.getByRole('button', { name: 'Reject' }).count()).toBe(0);
    expect(await postForm(page, action, {})).toBe(403);
    const { apiKey } = await tenant();
    expect(await call('GET', `/api/v1/transfers/${transferId}`, apiKey)).toMatchObject({
      status: 'pending',
      approval: { status: 'required' },
    });
  });

  it('an approver approves a held transfer and watches it settle', async () => {
    const transferId = await heldTransfer();
    const { page } = await signedIn('approver');
    expect(await open(page, '/dashboard/approvals')).toBe(200);
    const row = page.locator(`[data-testid="approval-row"][data-id="${transferId}"]`);
    await row.waitFor();
    await screenshot(page, 'approvals');
    await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'POST'),
      page.waitForEvent('load'),
      row.getByRole('button', { name: 'Approve' }).click(),
    ]);
    expect(await open(page, `/dashboard/transfers/${transferId}`)).toBe(200);
    await eventually(async () => {
      await page.reload();
      return (await page.getByTestId('transfer-status').textContent())?.includes('successful');
    });
    const kinds = await page
      .getByTestId('timeline')
      .locator('li')
      .evaluateAll((items) => items.map((item) => item.getAttribute('data-kind')));
    expect(kinds).toEqual(expect.arrayContaining(['created', 'approval_required', 'approved', 'settled']));
    await screenshot(page, 'transfer-timeline');
  });

  it('a developer adds a webhook endpoint, sends a test event and sees it delivered', async () => {
    const { page } = await signedIn('developer');
    const url = `${receiver.url}/developer-${randomUUID().slice(0, 8)}`;
    expect(await open(page, '/dashboard/webhooks')).toBe(200);
    await page.fill('input[name=url]', url);
    await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'POST'),
      page.waitForEvent('load'),
      page.getByRole('button', { name: 'Add endpoint' }).click(),
    ]);
    expect(await page.getByTestId('new-secret').textContent()).toMatch(/whsec_/);
    const { apiKey } = await tenant();
    const endpoints = await call('GET', '/api/v1/webhook-endpoints', apiKey);
    const endpoint = endpoints.items.find((item: any) => item.url === url);
    expect(endpoint).toBeDefined();

    expect(await open(page, `/dashboard/webhooks/endpoints/${endpoint.id}`)).toBe(200);
    await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'POST'),
      page.waitForEvent('load'),
      page.getByRole('button', { name: 'Send test event' }).click(),
    ]);
    const delivery = await eventually(async () => {
      const list = await call('GET', `/api/v1/webhook-deliveries?endpoint_id=${endpoint.id}`, apiKey);
      return list.items.find((item: any) => item.attempts.length >= 1);
    });
    expect(await open(page, '/dashboard/webhooks/deliveries')).toBe(200);
    expect(await page.locator(`[data-testid=delivery-row] a[href$="${delivery.id}"]`).count()).toBeGreaterThan(0);
    expect(await open(page, `/dashboard/webhooks/deliveries/${delivery.id}`)).toBe(200);
    expect(await page.getByTestId('attempt').first().textContent()).toContain('200');
    await screenshot(page, 'webhook-delivery');
  });

  it('an owner invites a member in the console, and the link it shows works in another browser', async () => {
    const { page } = await signedIn('owner');
    const invited = new Person(email('invited'));
    expect(await open(page, '/dashboard/team')).toBe(200);
    await page.fill('input[name=email]', invited.email);
    await page.selectOption('select[name=role]', 'viewer');
    await Promise.all([
      page.waitForResponse((response) => response.request().method() === 'POST'),
      page.waitForEvent('load'),
      page.getByRole('button', { name: 'Invite' }).click(),
    ]);
    const shown = page.getByTestId('invitation-link');
    const link = ((await shown.getAttribute('href')) ?? (await shown.textContent()) ?? '').trim();
    expect(link).toMatch(/\/dashboard\/invitations\//);

    const elsewhere = await newPage();
    await joinInBrowser(elsewhere, link, invited);
    expect(await elsewhere.locator('.who').textContent()).toContain(`${invited.email} (viewer)`);
    expect(await open(page, '/dashboard/team')).toBe(200);
    expect(await page.getByTestId('member-row').filter({ hasText: invited.email }).count()).toBe(1);
  });

  it('another tenant’s transfer is not found', async () => {
    const other = await createFundedTenant(stack.db.orm, WALLET, 'Someone else');
    const theirs = await transfer(other.apiKey);
    const { page } = await signedIn('owner');
    expect(await open(page, `/dashboard/transfers/${theirs.id}`)).toBe(404);
    expect(await page.locator('body').textContent()).not.toContain(theirs.reference);
  });
});

describe('every page is accessible (axe-core: no serious or critical violations)', () => {
  const pages: [string, (w: World) => string | undefined][] = [
    ['overview', () => '/dashboard'],
    ['transfers', () => '/dashboard/transfers'],
    ['a transfer', (w) => `/dashboard/transfers/${w.transferId}`],
    ['batches', () => '/dashboard/batches'],
    ['a batch', (w) => `/dashboard/batches/${w.batchId}`],
    ['approvals', () => '/dashboard/approvals'],
    ['recipients', () => '/dashboard/recipients'],
    ['virtual accounts', () => '/dashboard/virtual-accounts'],
    ['a virtual account', (w) => `/dashboard/virtual-accounts/${w.virtualAccountId}`],
    ['cards', () => '/dashboard/cards'],
    ['a card', (w) => w.cardId && `/dashboard/cards/${w.cardId}`],
    ['webhooks', () => '/dashboard/webhooks'],
    ['a webhook endpoint', (w) => `/dashboard/webhooks/endpoints/${w.endpointId}`],
    ['webhook deliveries', () => '/dashboard/webhooks/deliveries'],
    ['a webhook delivery', (w) => `/dashboard/webhooks/deliveries/${w.deliveryId}`],
    ['events', () => '/dashboard/events'],
    ['an event', (w) => `/dashboard/events/${w.eventId}`],
    ['API keys', () => '/dashboard/keys'],
    ['wallet statement', () => '/dashboard/wallet'],
    ['team', () => '/dashboard/team'],
    ['audit log', () => '/dashboard/audit-log'],
  ];
  it.each(pages)('%s', async (name, path) => {
    const { page } = await signedIn('owner');
    const url = path(await world());
    expect(url, `${name}: no record to show`).toBeDefined();
    expect(await open(page, url!)).toBe(200);
    await expectAccessible(page);
    if (name === 'overview') await screenshot(page, 'overview');
    // On a phone (390 px wide) the page fits its width: only a wide table scrolls, inside its box.
    await page.setViewportSize({ width: 390, height: 844 });
    const overflow = await page.evaluate(() => {
      const root = (globalThis as any).document.documentElement;
      return root.scrollWidth - root.clientWidth;
    });
    expect(overflow, `${name} is wider than a phone`).toBeLessThanOrEqual(0);
    // …and, scrolled by keyboard there too, still accessible; then back to the desktop size.
    await expectAccessible(page);
    await page.setViewportSize({ width: 1280, height: 1000 });
  });

  it('sign-in and an invitation', async () => {
    const page = await newPage();
    expect(await open(page, '/dashboard/sign-in')).toBe(200);
    await expectAccessible(page);
    const link = await inviteLink(stack.db.orm, stack.gatewayUrl, (await tenant()).tenantId, email('axe'), 'viewer');
    expect(await open(page, link)).toBe(200);
    await expectAccessible(page);
    await page.context().close();
  });
});
