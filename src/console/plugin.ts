// The console's corner of the API (decisions §22): everything under /dashboard, in its own Fastify
// scope, so that forms, cookies, its headers and its HTML errors stay here and the API keeps JSON.
// Every response carries a strict Content-Security-Policy (no script at all, styles from our
// origin, never framed). Every page but sign-in and an invitation's needs a session (a cookie whose
// token's hash names a row of console_sessions); every POST needs the session's CSRF token in the
// form (`_csrf`), or, before there is a session, the pre-session cookie's.
import { readFile } from 'node:fs/promises';
import cookie from '@fastify/cookie';
import formbody from '@fastify/formbody';
import type { EntityManager } from '@mikro-orm/postgresql';
import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ResolvedKey } from '../http/auth.ts';
import { ApiRefusal, type ConsoleApi } from './api.ts';
import { type PageFrame, sendBarePage, sendPage } from './render.ts';
import { newToken, sameSecret, tokenHash } from './secrets.ts';
import { type Session, sessionByToken } from './store.ts';

export const SESSION_COOKIE = 'gw_console';
export const PRESESSION_COOKIE = 'gw_console_pre';
export const CONSOLE_PREFIX = '/dashboard';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "style-src 'self'",
  "img-src 'self' data:",
  "form-action 'self'",
  "frame-ancestors 'none'",
  "base-uri 'none'",
].join('; ');

const HEADERS: Record<string, string> = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'x-frame-options': 'DENY',
  'referrer-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'permissions-policy': 'camera=(), microphone=(), geolocation=(), payment=()',
  'cache-control': 'no-store',
};

declare module 'fastify' {
  interface FastifyContextConfig {
    /** A console page that needs no session (sign-in, an invitation's). */
    consolePublic?: boolean;
  }
  interface FastifyRequest {
    /** The console's signed-in person, for console routes that need one. */
    consoleSession?: Session;
  }
}

/** Whether the request came to a loopback host: the one place a cookie may go without `Secure`. */
export function onLoopback(request: FastifyRequest): boolean {
  const host = request.hostname.replace(/:\d+$/, '');
  return host === 'localhost' || host === '127.0.0.1' || host === '[::1]' || host === '::1';
}

export function cookieOptions(request: FastifyRequest) {
  return {
    path: CONSOLE_PREFIX,
    httpOnly: true,
    sameSite: 'strict' as const,
    secure: !onLoopback(request),
  };
}

/** The session of a request (set by the hook for every route that needs one). */
export function sessionOf(request: FastifyRequest): Session {
  if (!request.consoleSession) throw new Error(`console route ${request.routeOptions.url} used sessionOf without one`);
  return request.consoleSession;
}

/** The pre-session CSRF token (sign-in and invitation forms): the cookie's, set now when absent. */
export function presessionToken(request: FastifyRequest, reply: FastifyReply): string {
  const existing = request.cookies[PRESESSION_COOKIE];
  if (existing && /^[A-Za-z0-9_-]{43}$/.test(existing)) return existing;
  const token = newToken();
  reply.setCookie(PRESESSION_COOKIE, token, cookieOptions(request));
  return token;
}

/** What the console's routes are given. */
export interface ConsoleDeps {
  em: () => EntityManager;
  api: ConsoleApi;
  /** Where invitation links point: CONSOLE_URL; when unset, the address the request came to. */
  consoleUrl: (request: FastifyRequest) => string;
  /** Seals and opens TOTP secrets at rest (the deployment's encryption key). */
  seal: (secret: string) => string;
  open: (sealed: string) => string;
}

/** A page's frame and the person's identity in the session's mode (undefined: no such mode yet). */
export async function frameOf(
  request: FastifyRequest,
  deps: ConsoleDeps,
  title: string,
  section: string,
): Promise<{ frame: PageFrame; key: ResolvedKey | undefined }> {
  const session = sessionOf(request);
  const key = await deps.api.keyOf(session);
  const hasLive =
    session.mode === 'live' ? key !== undefined : (await deps.api.keyOf({ ...session, mode: 'live' })) !== undefined;
  const notice = (request.query as Record<string, unknown> | undefined)?.notice;
  return {
    key,
    frame: {
      title,
      section,
      user: { email: session.email, role: session.role },
      mode: session.mode,
      csrf: session.csrf_token,
      path: request.url.split('?')[0] ?? CONSOLE_PREFIX,
      hasLive,
      notice: typeof notice === 'string' ? notice : undefined,
    },
  };
}

/**
 * A page that needs the person's identity in the mode: `render` gets it; without a live mode the
 * page says so instead.
 */
export async function withMode(
  request: FastifyRequest,
  reply: FastifyReply,
  deps: ConsoleDeps,
  title: string,
  section: string,
  render: (frame: PageFrame, key: ResolvedKey) => Promise<FastifyReply>,
): Promise<FastifyReply> {
  const { frame, key } = await frameOf(request, deps, title, section);
  if (!key) return sendPage(reply, 'no-live-mode', frame);
  return render(frame, key);
}

/** The page an error shows: the API's message (escaped) and status, or a plain one. */
async function errorPage(request: FastifyRequest, reply: FastifyReply, status: number, message: string) {
  const signedIn = request.consoleSession !== undefined;
  if (!signedIn) return sendBarePage(reply, 'error-bare', { status, message }, status);
  const { frame } = await frameOf(request, (request.server as ConsoleScope).consoleDeps, 'Error', '').catch(() => ({
    frame: undefined,
  }));
  if (!frame) return sendBarePage(reply, 'error-bare', { status, message }, status);
  return sendPage(reply, 'error', frame, { status, message }, status);
}

interface ConsoleScope extends FastifyInstance {
  consoleDeps: ConsoleDeps;
}

/** Registers the console's scope: its parsers, headers, session and CSRF checks, errors, assets. */
export async function consoleScope(
  scope: FastifyInstance,
  deps: ConsoleDeps,
  routes: (scope: FastifyInstance, deps: ConsoleDeps) => void,
): Promise<void> {
  scope.decorate('consoleDeps', deps);
  await scope.register(cookie);
  await scope.register(formbody, { bodyLimit: 64 * 1024 });
  scope.addHook('onRequest', async (request, reply) => {
    for (const [name, value] of Object.entries(HEADERS)) reply.header(name, value);
    if (request.routeOptions.config.consolePublic || !request.routeOptions.url) return;
    const token = request.cookies[SESSION_COOKIE];
    const session = token ? await sessionByToken(deps.em(), tokenHash(token)) : undefined;
    if (!session) {
      if (token) reply.clearCookie(SESSION_COOKIE, cookieOptions(request));
      if (request.method === 'GET') {
        const next = encodeURIComponent(request.url);
        return reply.redirect(`${CONSOLE_PREFIX}/sign-in?next=${next}`, 303);
      }
      return sendBarePage(reply, 'error-bare', { status: 401, message: 'Your session has ended: sign in again.' }, 401);
    }
    request.consoleSession = session;
    request.log = request.log.child({ userId: session.user_id });
  });
  // Forms are parsed by now: a POST carries its CSRF token, or is refused before its handler.
  scope.addHook('preHandler', async (request, reply) => {
    if (request.method !== 'POST') return;
    const body = request.body as Record<string, unknown> | undefined;
    const sent = typeof body?._csrf === 'string' ? body._csrf : '';
    const expected = request.consoleSession
      ? request.consoleSession.csrf_token
      : (request.cookies[PRESESSION_COOKIE] ?? '');
    if (!sent || !expected || !sameSecret(sent, expected)) {
      request.log.warn('console form refused: missing or wrong CSRF token');
      return errorPage(
        request,
        reply,
        403,
        'This form has expired or did not come from this console (CSRF check failed): reload the page and try again.',
      );
    }
  });
  scope.setErrorHandler(async (error: FastifyError, request, reply) => {
    if (error instanceof ApiRefusal) return errorPage(request, reply, error.status, error.message);
    const status = error.statusCode && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status >= 500) request.log.error({ err: error }, 'console page failed');
    const message =
      status === 500 ? 'Something went wrong on our side; it has been logged.' : 'This request could not be read.';
    return errorPage(request, reply, status, message);
  });
  scope.setNotFoundHandler(async (request, reply) => {
    for (const [name, value] of Object.entries(HEADERS)) reply.header(name, value);
    return sendBarePage(reply, 'error-bare', { status: 404, message: 'There is no such page.' }, 404);
  });
  const css = await readFile(new URL('./assets/console.css', import.meta.url), 'utf8');
  scope.get(
    '/assets/console.css',
    { config: { public: true, consolePublic: true }, schema: { hide: true } },
    (_r, reply) => reply.header('cache-control', 'public, max-age=3600').type('text/css; charset=utf-8').send(css),
  );
  routes(scope, deps);
}
