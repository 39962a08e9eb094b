// The console as a test drives it over HTTP (a browser without one: cookies, forms, redirects):
// invitations made as the operator CLI makes them, joined with a password and a TOTP code, and
// pages fetched and forms posted with the page's CSRF token. test/browser/ drives a real Chromium.
import type { MikroORM } from '@mikro-orm/postgresql';
import { invite } from '../../src/console/team.ts';
import { totpCode } from '../../src/console/secrets.ts';

export const TEST_PASSWORD = 'correct horse battery staple';

/** An invitation link to the tenant's console, made as `admin tenant invite` makes it. */
export async function inviteLink(
  orm: MikroORM,
  baseUrl: string,
  tenantId: string,
  email: string,
  role: 'owner' | 'developer' | 'approver' | 'viewer',
): Promise<string> {
  const made = await invite(
    orm.em.fork(),
    { tenantId, email, role, consoleUrl: baseUrl },
    { actor: { type: 'operator', id: 'ops-test', name: 'ops-test' }, ip: null, requestId: null },
  );
  return made.link;
}

/** The value of the page's first `_csrf` field. */
export function csrfOf(html: string): string {
  const match = /name="_csrf" value="([^"]+)"/.exec(html);
  if (!match) throw new Error('no CSRF token on the page');
  return match[1]!;
}

/** The TOTP key an invitation page shows. */
export function totpSecretOf(html: string): string {
  const match = /data-testid="totp-secret">([A-Z2-7]+)</.exec(html);
  if (!match) throw new Error('no TOTP key on the page');
  return match[1]!;
}

export interface Page {
  status: number;
  html: string;
  headers: Headers;
  /** Where a redirect points (303 after a form). */
  location: string | null;
}

/**
 * A person's authenticator app as the server sees it: it never accepts a code's 30-second step
 * twice and allows one step of drift ahead, so each code is of the earliest step after the last one
 * used, waiting for the clock only when three codes were used within 30 seconds.
 */
export class Authenticator {
  private lastStep = 0;

  async code(secret: string): Promise<string> {
    for (;;) {
      const now = Math.floor(Date.now() / 30_000);
      const step = Math.max(now, this.lastStep + 1);
      if (step <= now + 1) {
        this.lastStep = step;
        return totpCode(secret, step * 30_000 + 1_000);
      }
      await new Promise((resolve) => setTimeout(resolve, (now + 1) * 30_000 - Date.now() + 50));
    }
  }
}

/** One person's browser: a cookie jar, and the last page's CSRF token for the next form. */
export class ConsoleClient {
  readonly baseUrl: string;
  readonly cookies = new Map<string, string>();
  /** The TOTP key they set up when joining (undefined: none). */
  totpSecret: string | undefined;
  email = '';
  csrf = '';

  constructor(baseUrl: string) {
    this.baseUrl = baseUrl.replace(/\/$/, '');
  }

  private cookieHeader(): string {
    return [...this.cookies].map(([name, value]) => `${name}=${value}`).join('; ');
  }

  private remember(headers: Headers): void {
    for (const line of headers.getSetCookie()) {
      const [pair] = line.split(';');
      const index = pair!.indexOf('=');
      const name = pair!.slice(0, index);
      const value = pair!.slice(index + 1);
      if (value === '' || /Max-Age=0/i.test(line)) this.cookies.delete(name);
      else this.cookies.set(name, value);
    }
  }

  private async send(method: 'GET' | 'POST', path: string, body?: URLSearchParams): Promise<Page> {
    const url = path.startsWith('http') ? path : `${this.baseUrl}${path}`;
    const response = await fetch(url, {
      method,
      redirect: 'manual',
      headers: {
        cookie: this.cookieHeader(),
        ...(body ? { 'content-type': 'application/x-www-form-urlencoded' } : {}),
      },
      ...(body ? { body } : {}),
    });
    this.remember(response.headers);
    const html = await response.text();
    const token = /name="_csrf" value="([^"]+)"/.exec(html);
    if (token) this.csrf = token[1]!;
    return { status: response.status, html, headers: response.headers, location: response.headers.get('location') };
  }

  get(path: string): Promise<Page> {
    return this.send('GET', path);
  }

  /** Posts a form with the last page's CSRF token (unless `_csrf` is given, or `csrf: false`). */
  post(path: string, fields: Record<string, string | string[]> = {}, options: { csrf?: boolean } = {}): Promise<Page> {
    const body = new URLSearchParams();
    if (options.csrf !== false && fields._csrf === undefined) body.set('_csrf', this.csrf);
    for (const [name, value] of Object.entries(fields)) {
      for (const item of Array.isArray(value) ? value : [value]) body.append(name, item);
    }
    return this.send('POST', path, body);
  }

  /** Codes of their TOTP key, each of a step the server has not seen (set by joining). */
  private readonly authenticator = new Authenticator();

  /** A code the server will take now (see Authenticator). */
  code(): Promise<string> {
    if (!this.totpSecret) throw new Error(`${this.email} has no TOTP key`);
    return this.authenticator.code(this.totpSecret);
  }

  /**
   * Joins through an invitation link: a password, and TOTP unless `totp` is false (which only a
   * developer or viewer may skip). Signed in after.
   */
  async join(link: string, email: string, password = TEST_PASSWORD, totp = true): Promise<Page> {
    this.email = email;
    const page = await this.get(link);
    if (page.status !== 200) throw new Error(`invitation page answered ${page.status}: ${page.html}`);
    if (totp) this.totpSecret = totpSecretOf(page.html);
    const joined = await this.post(new URL(link).pathname, {
      password,
      confirm: password,
      code: totp ? await this.code() : '',
    });
    if (joined.status !== 303) throw new Error(`joining answered ${joined.status}: ${joined.html}`);
    // The session's CSRF token, for the forms that follow (the last one was the invitation's).
    await this.get('/dashboard');
    return joined;
  }

  /** Signs in (with a fresh TOTP code when they have a key): the response, 303 when it worked. */
  async signIn(email = this.email, password = TEST_PASSWORD, code?: string): Promise<Page> {
    await this.get('/dashboard/sign-in');
    const fields: Record<string, string> = { email, password };
    if (code !== undefined) fields.code = code;
    else if (this.totpSecret) fields.code = await this.code();
    const signed = await this.post('/dashboard/sign-in', fields);
    // The session's CSRF token, for the forms that follow.
    if (signed.status === 303) await this.get('/dashboard');
    return signed;
  }
}

/** A member of the tenant's console, joined through an invitation and signed in. */
export async function member(
  orm: MikroORM,
  baseUrl: string,
  tenantId: string,
  role: 'owner' | 'developer' | 'approver' | 'viewer',
  email = `${role}-${Math.random().toString(36).slice(2, 10)}@example.com`,
  options: { totp?: boolean } = {},
): Promise<ConsoleClient> {
  const client = new ConsoleClient(baseUrl);
  await client.join(await inviteLink(orm, baseUrl, tenantId, email, role), email, TEST_PASSWORD, options.totp ?? true);
  return client;
}
