// The console's door (decisions §22), over HTTP as a browser uses it: invitations that work once
// and only while fresh, passwords and TOTP (no code twice), sessions in PostgreSQL that end at
// sign-out, on idleness, on a role change or removal; CSRF on every form; the headers that keep
// the console out of frames and scripts out of pages; lockout per account, limits per address.
import { describe, expect, it } from 'vitest';
import { ConsoleClient, TEST_PASSWORD, inviteLink, member } from '../support/console.ts';
import { createFundedTenant, listenLocally, useTestApp } from '../support/app.ts';
import { setRole } from '../../src/console/team.ts';
import { totpCode } from '../../src/console/secrets.ts';
import { runAdmin } from '../support/cli.ts';

const own = useTestApp();
let baseUrl = '';

async function url(): Promise<string> {
  if (!baseUrl) baseUrl = (await listenLocally(own.app)).url;
  return baseUrl;
}

async function tenant(wallet = 0) {
  return createFundedTenant(own.db.orm, wallet);
}

describe('invitations', () => {
  it('works once: a second use of the link, or an expired one, is a 404 page', async () => {
    const { tenantId } = await tenant();
    const link = await inviteLink(own.db.orm, await url(), tenantId, 'once@example.com', 'viewer');
    const first = new ConsoleClient(await url());
    await first.join(link, 'once@example.com');
    const again = await new ConsoleClient(await url()).get(link);
    expect(again.status).toBe(404);
    expect(again.html).toContain('has been used or has expired');

    const stale = await inviteLink(own.db.orm, await url(), tenantId, 'stale@example.com', 'viewer');
    const token = new URL(stale).pathname.split('/').pop()!;
    const { tokenHash } = await import('../../src/console/secrets.ts');
    await own.db.orm.em
      .fork()
      .getConnection()
      .execute(`update console_invitations set expires_at = now() - interval '1 second' where token_hash = ?`, [
        tokenHash(token),
      ]);
    expect((await new ConsoleClient(await url()).get(stale)).status).toBe(404);
  });

  it('asks for a password of 12 characters, typed twice, and a TOTP code for owners and approvers', async () => {
    const { tenantId } = await tenant();
    const link = await inviteLink(own.db.orm, await url(), tenantId, 'approver@example.com', 'approver');
    const client = new ConsoleClient(await url());
    await client.get(link);
    const path = new URL(link).pathname;
    const short = await client.post(path, { password: 'short', confirm: 'short', code: '' });
    expect(short.status).toBe(400);
    expect(short.html).toContain('at least 12 characters');
    const differ = await client.post(path, { password: TEST_PASSWORD, confirm: `${TEST_PASSWORD}!`, code: '' });
    expect(differ.html).toContain('not the same');
    const noCode = await client.post(path, { password: TEST_PASSWORD, confirm: TEST_PASSWORD, code: '' });
    expect(noCode.status).toBe(400);
    expect(noCode.html).toContain('That code is not right');
    // The link still works after the refusals: the invitation is used only by a join that works.
    const joined = await client.join(link, 'approver@example.com');
    expect(joined.location).toBe('/dashboard');
    expect((await client.get('/dashboard')).status).toBe(200);
  });

  it('refuses an email that already has an account, and a malformed email or role', async () => {
    const { tenantId } = await tenant();
    await member(own.db.orm, await url(), tenantId, 'viewer', 'taken@example.com');
    await expect(inviteLink(own.db.orm, await url(), tenantId, 'Taken@Example.com', 'viewer')).rejects.toThrow(
      'already has a console account',
    );
    await expect(inviteLink(own.db.orm, await url(), tenantId, 'not-an-email', 'viewer')).rejects.toThrow(
      'email must be an email address',
    );
  });
});

describe('signing in', () => {
  it('takes the password and a TOTP code, never the same code twice, and records it in the audit log', async () => {
    const { tenantId } = await tenant();
    const owner = await member(own.db.orm, await url(), tenantId, 'owner', 'sign-in@example.com');
    await owner.post('/dashboard/sign-out');
    const wrongCode = await owner.signIn(owner.email, TEST_PASSWORD, '000000');
    expect(wrongCode.status).toBe(401);
    const noCode = await owner.signIn(owner.email, TEST_PASSWORD, '');
    expect(noCode.status).toBe(401);
    const code = await owner.code();
    expect((await owner.signIn(owner.email, TEST_PASSWORD, code)).status).toBe(303);
    expect((await owner.get('/dashboard')).status).toBe(200);
    // The same code again (another browser): refused, as a code seen on a shoulder or a screen.
    const thief = new ConsoleClient(await url());
    expect((await thief.signIn(owner.email, TEST_PASSWORD, code)).status).toBe(401);
    const rows = await own.db.orm.em
      .fork()
      .getConnection()
      .execute<{ action: string; actor_type: string; actor_name: string }[]>(
        `select action, actor_type, actor_name from audit_log where tenant_id = ? and action = 'session.signed_in'`,
        [tenantId],
      );
    expect(rows.length).toBe(2);
    expect(rows.every((row) => row.actor_type === 'user' && row.actor_name === 'sign-in@example.com')).toBe(true);
  });

  it('sends only console paths after sign-in, never another site', async () => {
    const { tenantId } = await tenant();
    // A viewer who chose no second factor (only owners and approvers must have one).
    const viewer = await member(own.db.orm, await url(), tenantId, 'viewer', undefined, { totp: false });
    await viewer.post('/dashboard/sign-out');
    for (const next of ['//evil.example/x', 'https://evil.example', '/dashboard//evil.example', '/\\evil.example']) {
      await viewer.get('/dashboard/sign-in');
      const signed = await viewer.post('/dashboard/sign-in', {
        email: viewer.email,
        password: TEST_PASSWORD,
        next,
      });
      expect(signed.status).toBe(303);
      expect(signed.location).toBe('/dashboard');
    }
    await viewer.get('/dashboard/sign-in');
    const kept = await viewer.post('/dashboard/sign-in', {
      email: viewer.email,
      password: TEST_PASSWORD,
      next: '/dashboard/transfers?status=failed',
    });
    expect(kept.location).toBe('/dashboard/transfers?status=failed');
  });

  it('locks an account after 10 failures (50 wrong passwords) without locking the address for another account', async () => {
    const { tenantId } = await tenant();
    const victim = await member(own.db.orm, await url(), tenantId, 'viewer', 'victim@example.com', { totp: false });
    const neighbour = await member(own.db.orm, await url(), tenantId, 'viewer', 'neighbour@example.com', {
      totp: false,
    });
    await victim.post('/dashboard/sign-out');
    await neighbour.post('/dashboard/sign-out');
    const attacker = new ConsoleClient(await url());
    await attacker.get('/dashboard/sign-in');
    for (let attempt = 0; attempt < 50; attempt += 1) {
      const refused = await attacker.post('/dashboard/sign-in', { email: victim.email, password: `guess-${attempt}` });
      expect(refused.status).toBe(401);
    }
    // The right password no longer opens the account, for now.
    const locked = await victim.signIn();
    expect(locked.status).toBe(401);
    expect(locked.html).toContain('locked');
    // Another account from the same address (every test client is 127.0.0.1) signs in.
    expect((await neighbour.signIn()).status).toBe(303);
    expect((await neighbour.get('/dashboard')).status).toBe(200);
    // Once the lock has run out, the right password works again.
    await own.db.orm.em
      .fork()
      .getConnection()
      .execute(`update console_users set locked_until = now() - interval '1 second' where email = ?`, [victim.email]);
    expect((await victim.signIn()).status).toBe(303);
  });

  it('refuses an address after 100 failures in 15 minutes, whichever accounts it tried', async () => {
    const { tenantId } = await tenant();
    const person = await member(own.db.orm, await url(), tenantId, 'viewer', undefined, { totp: false });
    await person.post('/dashboard/sign-out');
    await own.db.orm.em
      .fork()
      .getConnection()
      .execute(
        `insert into console_sign_in_failures (ip, email) select '127.0.0.1', 'nobody-' || n || '@example.com' from generate_series(1, 100) n`,
      );
    const refused = await person.signIn();
    expect(refused.status).toBe(429);
    expect(refused.html).toContain('Too many failed sign-ins from this address');
    await own.db.orm.em.fork().getConnection().execute(`delete from console_sign_in_failures where ip = '127.0.0.1'`);
    expect((await person.signIn()).status).toBe(303);
  });
});

describe('sessions', () => {
  it('end at sign-out: the old cookie opens nothing', async () => {
    const { tenantId } = await tenant();
    const viewer = await member(own.db.orm, await url(), tenantId, 'viewer');
    const stolen = new ConsoleClient(await url());
    for (const [name, value] of viewer.cookies) stolen.cookies.set(name, value);
    expect((await stolen.get('/dashboard')).status).toBe(200);
    const out = await viewer.post('/dashboard/sign-out');
    expect(out.location).toBe('/dashboard/sign-in?notice=signed_out');
    const after = await stolen.get('/dashboard');
    expect(after.status).toBe(303);
    expect(after.location).toBe('/dashboard/sign-in?next=%2Fdashboard');
  });

  it('end after 12 idle hours, and on a role change', async () => {
    const { tenantId } = await tenant();
    const idle = await member(own.db.orm, await url(), tenantId, 'viewer');
    await own.db.orm.em
      .fork()
      .getConnection()
      .execute(
        `update console_sessions set last_seen_at = now() - interval '12 hours 1 second'
          where user_id = (select id from console_users where email = ?)`,
        [idle.email],
      );
    expect((await idle.get('/dashboard')).status).toBe(303);

    const changed = await member(own.db.orm, await url(), tenantId, 'viewer');
    const [row] = await own.db.orm.em
      .fork()
      .getConnection()
      .execute<{ id: string }[]>(`select id from console_users where email = ?`, [changed.email]);
    await setRole(own.db.orm.em.fork(), tenantId, row!.id, 'developer', {
      actor: { type: 'operator', id: 'ops-test', name: 'ops-test' },
      ip: null,
      requestId: null,
    });
    expect((await changed.get('/dashboard')).status).toBe(303);
    expect((await changed.signIn()).status).toBe(303);
    expect((await changed.get('/dashboard')).html).toContain('(developer)');
  });

  it('set an HttpOnly, SameSite=Strict cookie on /dashboard, Secure unless on loopback', async () => {
    const { tenantId } = await tenant();
    const link = await inviteLink(own.db.orm, await url(), tenantId, 'cookie@example.com', 'viewer');
    const page = await fetch(link);
    const cookie = page.headers.getSetCookie().join('\n');
    expect(cookie).toMatch(/gw_console_pre=[^;]+; Path=\/dashboard; HttpOnly; SameSite=Strict/);
    expect(cookie).not.toContain('Secure');
    // The same page asked for under a public name (as behind a proxy): the cookie is Secure.
    const proxied = await own.app.inject({
      method: 'GET',
      url: new URL(link).pathname,
      headers: { host: 'console.example.com' },
    });
    expect(String(proxied.headers['set-cookie'])).toContain('Secure');
  });
});

describe('forms and headers', () => {
  it('refuses a form without its CSRF token, or with another session’s', async () => {
    const { tenantId } = await tenant();
    const viewer = await member(own.db.orm, await url(), tenantId, 'viewer');
    const other = await member(own.db.orm, await url(), tenantId, 'viewer');
    const missing = await viewer.post('/dashboard/sign-out', {}, { csrf: false });
    expect(missing.status).toBe(403);
    expect(missing.html).toContain('CSRF check failed');
    const foreign = await viewer.post('/dashboard/sign-out', { _csrf: other.csrf });
    expect(foreign.status).toBe(403);
    // Still signed in: the refused sign-out did nothing.
    expect((await viewer.get('/dashboard')).status).toBe(200);
    // Signing in needs the pre-session token too (no login CSRF).
    const blind = new ConsoleClient(await url());
    const forged = await blind.post(
      '/dashboard/sign-in',
      { email: viewer.email, password: TEST_PASSWORD },
      { csrf: false },
    );
    expect(forged.status).toBe(403);
  });

  it('serve every page under a CSP with no script and no framing', async () => {
    const { tenantId } = await tenant();
    const viewer = await member(own.db.orm, await url(), tenantId, 'viewer');
    for (const path of ['/dashboard/sign-in', '/dashboard', '/dashboard/no-such-page']) {
      const page = await viewer.get(path);
      const csp = page.headers.get('content-security-policy') ?? '';
      expect(csp).toContain("default-src 'none'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain('script-src');
      expect(page.headers.get('x-frame-options')).toBe('DENY');
      expect(page.headers.get('cache-control')).toBe('no-store');
    }
    expect((await viewer.get('/dashboard/no-such-page')).status).toBe(404);
  });

  it('switches between test and live, and says when the tenant has no live mode', async () => {
    const { tenantId } = await tenant();
    const viewer = await member(own.db.orm, await url(), tenantId, 'viewer');
    expect((await viewer.get('/dashboard')).html).toContain('You are looking at test mode');
    const switched = await viewer.post('/dashboard/mode', { mode: 'live', back: '/dashboard' });
    expect(switched.location).toBe('/dashboard');
    const live = await viewer.get('/dashboard');
    expect(live.html).toContain('Live data');
    expect(live.html).not.toContain('You are looking at test mode');
  });
});

describe('admin tenant invite', () => {
  it('prints a one-time link at CONSOLE_URL that joins the tenant, and audits it as the operator', async () => {
    const { tenantId } = await tenant();
    const printed = await runAdmin(
      { DATABASE_URL: own.db.url, CONSOLE_URL: await url(), GATEWAY_OPERATOR: 'ops-ada' },
      'tenant',
      'invite',
      '--tenant',
      tenantId,
      '--email',
      'Owner@Example.com',
      '--role',
      'owner',
    );
    expect(printed.code, printed.stderr).toBe(0);
    expect(printed.json).toMatchObject({ email: 'owner@example.com', role: 'owner', tenant_id: tenantId });
    expect(printed.json.link).toMatch(new RegExp(`^${await url()}/dashboard/invitations/[A-Za-z0-9_-]{43}$`));
    const owner = new ConsoleClient(await url());
    await owner.join(printed.json.link, 'owner@example.com');
    expect((await owner.get('/dashboard')).html).toContain('owner@example.com (owner)');
    const [entry] = await own.db.orm.em
      .fork()
      .getConnection()
      .execute<{ actor_type: string; details: { email: string; role: string } }[]>(
        `select actor_type, details from audit_log where tenant_id = ? and action = 'team.invited'`,
        [tenantId],
      );
    expect(entry).toMatchObject({ actor_type: 'operator', details: { email: 'owner@example.com', role: 'owner' } });
    const refused = await runAdmin(
      { DATABASE_URL: own.db.url },
      'tenant',
      'invite',
      '--tenant',
      tenantId,
      '--email',
      'x@example.com',
      '--role',
      'boss',
    );
    expect(refused.code).not.toBe(0);
    expect(refused.stderr).toContain('role must be one of owner, developer, approver, viewer');
  });
});

describe('the console’s calls to the API', () => {
  it('cannot be forged from outside: a made-up ticket is an invalid key, and a real one works once', async () => {
    const forged = await fetch(`${await url()}/api/v1/wallet`, {
      headers: { 'x-gateway-internal-call': 'a'.repeat(43) },
    });
    expect(forged.status).toBe(401);
    // Even with a key beside it, a ticket header that names nothing is refused, not ignored.
    const { apiKey } = await tenant();
    const mixed = await fetch(`${await url()}/api/v1/wallet`, {
      headers: { 'x-gateway-internal-call': 'b'.repeat(43), authorization: `Bearer ${apiKey}` },
    });
    expect(mixed.status).toBe(401);
  });
});

describe('the invitation code', () => {
  it('is a TOTP of the shown key', () => {
    expect(totpCode('JBSWY3DPEHPK3PXP', 59_000)).toMatch(/^\d{6}$/);
  });
});
