// Signing in and out, accepting an invitation, and the test/live switch (decisions §22).
// A sign-in is refused alike for an unknown email, a wrong password or code, and a locked account
// (one message, and an unknown email checked against a decoy hash so that it takes as long). Ten
// failures in a row lock the account for 15 minutes; 100 failures from one address in 15 minutes
// refuse that address for the rest of them, whichever accounts it tried.
import QRCode from 'qrcode';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { recordAuditEntry } from '../audit/log.ts';
import { tenantMode } from '../tenants/tenants.ts';
import {
  CONSOLE_PREFIX,
  type ConsoleDeps,
  PRESESSION_COOKIE,
  SESSION_COOKIE,
  cookieOptions,
  presessionToken,
  sessionOf,
} from './plugin.ts';
import { sendBarePage } from './render.ts';
import { TOTP_ROLES } from './roles.ts';
import { consoleRoutes, formOf, queryOf } from './routes.ts';
import {
  PASSWORD_MAX,
  PASSWORD_MIN,
  hashPassword,
  newToken,
  newTotpSecret,
  tokenHash,
  totpCounter,
  totpUri,
  verifyPassword,
} from './secrets.ts';
import {
  ADDRESS_FAILURES,
  type ConsoleUser,
  LOCK_AFTER_FAILURES,
  LOCK_MINUTES,
  acceptInvitation,
  addressFailures,
  createSession,
  invitationTotpSecret,
  openInvitation,
  recordAddressFailure,
  recordFailure,
  recordSignIn,
  revokeSession,
  setSessionMode,
  userByEmail,
} from './store.ts';

const REFUSED = `That email, password or code is not right, or the account is locked (${LOCK_AFTER_FAILURES} failed attempts in a row lock it for ${LOCK_MINUTES} minutes).`;

/** Where to go after signing in: a console path of ours, never another site (`//evil`, `/\evil`). */
export function safeNext(value: string | undefined): string {
  if (!value || !value.startsWith(`${CONSOLE_PREFIX}`) || /[\\\s]|\/\/|%2f%2f|%5c/i.test(value)) return CONSOLE_PREFIX;
  return value;
}

async function startSession(request: FastifyRequest, reply: FastifyReply, deps: ConsoleDeps, user: ConsoleUser) {
  const token = newToken();
  const em = deps.em();
  await createSession(em, {
    tokenHash: tokenHash(token),
    userId: user.id,
    csrfToken: newToken(),
    ip: request.ip,
    userAgent: String(request.headers['user-agent'] ?? ''),
  });
  await recordAuditEntry(em, {
    tenantId: user.tenant_id,
    action: 'session.signed_in',
    actor: { type: 'user', id: user.id, name: user.email },
    target: { type: 'console_user', id: user.id },
    ip: request.ip,
    requestId: request.id,
  });
  reply.setCookie(SESSION_COOKIE, token, cookieOptions(request));
  reply.clearCookie(PRESESSION_COOKIE, cookieOptions(request));
}

async function qrCodeOf(uri: string): Promise<string> {
  const svg = await QRCode.toString(uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
  return `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
}

export function signInRoutes(scope: FastifyInstance, deps: ConsoleDeps): void {
  const route = consoleRoutes(scope);

  const signInPage = (request: FastifyRequest, reply: FastifyReply, extra: Record<string, unknown>, status = 200) =>
    sendBarePage(
      reply,
      'sign-in',
      {
        csrf: presessionToken(request, reply),
        next: safeNext(queryOf(request).next ?? formOf(request).next),
        ...extra,
      },
      status,
    );

  route.get(
    '/sign-in',
    async (request, reply) => signInPage(request, reply, { notice: queryOf(request).notice }),
    true,
  );

  route.post(
    '/sign-in',
    async (request, reply) => {
      const form = formOf(request);
      const email = (form.email ?? '').slice(0, 320);
      const em = deps.em();
      if ((await addressFailures(em, request.ip)) >= ADDRESS_FAILURES) {
        request.log.warn({ ip: request.ip }, 'console sign-in refused: too many failures from this address');
        return signInPage(
          request,
          reply,
          { error: `Too many failed sign-ins from this address: try again in ${LOCK_MINUTES} minutes.`, email },
          429,
        );
      }
      const user = email ? await userByEmail(em, email) : undefined;
      const passwordOk = await verifyPassword((form.password ?? '').slice(0, PASSWORD_MAX), user?.password_hash);
      let counter: number | null = null;
      let ok = user !== undefined && !user.locked && passwordOk;
      if (ok && user?.totp_secret) {
        counter = totpCounter(deps.open(user.totp_secret), form.code ?? '', user.totp_last_counter);
        ok = counter !== null;
      }
      if (!ok || !user) {
        await recordAddressFailure(em, request.ip, email);
        if (user && !user.locked) await recordFailure(em, user.id);
        request.log.info({ userId: user?.id, locked: user?.locked ?? false }, 'console sign-in refused');
        return signInPage(request, reply, { error: REFUSED, email }, 401);
      }
      await recordSignIn(em, user.id, counter);
      await startSession(request, reply, deps, user);
      return reply.redirect(safeNext(form.next), 303);
    },
    true,
  );

  route.post('/sign-out', async (request, reply) => {
    await revokeSession(deps.em(), sessionOf(request).id);
    reply.clearCookie(SESSION_COOKIE, cookieOptions(request));
    return reply.redirect(`${CONSOLE_PREFIX}/sign-in?notice=signed_out`, 303);
  });

  route.post('/mode', async (request, reply) => {
    const form = formOf(request);
    const mode = form.mode === 'live' ? 'live' : 'test';
    await setSessionMode(deps.em(), sessionOf(request).id, mode);
    return reply.redirect(safeNext(form.back), 303);
  });

  // An invitation's page: choose a password, and set up TOTP (required for owners and approvers).
  const invitationPage = async (
    request: FastifyRequest<{ Params: { token: string } }>,
    reply: FastifyReply,
    extra: Record<string, unknown> = {},
    status = 200,
  ) => {
    const em = deps.em();
    const token = request.params.token;
    const invitation = /^[A-Za-z0-9_-]{43}$/.test(token) ? await openInvitation(em, tokenHash(token)) : undefined;
    if (!invitation) {
      return sendBarePage(
        reply,
        'error-bare',
        { status: 404, message: 'This invitation link has been used or has expired: ask an owner for a new one.' },
        404,
      );
    }
    const secret = deps.open(await invitationTotpSecret(em, invitation.id, deps.seal(newTotpSecret())));
    const tenant = await tenantMode(em, invitation.tenant_id, 'test');
    const uri = totpUri(secret, invitation.email);
    return sendBarePage(
      reply,
      'invitation',
      {
        csrf: presessionToken(request, reply),
        invitation,
        tenantName: tenant?.name ?? '',
        secret,
        uri,
        qr: await qrCodeOf(uri),
        totpRequired: TOTP_ROLES.includes(invitation.role),
        passwordMin: PASSWORD_MIN,
        ...extra,
      },
      status,
    );
  };

  scope.get<{ Params: { token: string } }>(
    '/invitations/:token',
    { config: { public: true, consolePublic: true }, schema: { hide: true } },
    async (request, reply) => invitationPage(request, reply),
  );

  scope.post<{ Params: { token: string } }>(
    '/invitations/:token',
    { config: { public: true, consolePublic: true }, schema: { hide: true } },
    async (request, reply) => {
      const form = formOf(request);
      const password = form.password ?? '';
      const refuse = (error: string) => invitationPage(request, reply, { error }, 400);
      if (password.length < PASSWORD_MIN) return refuse(`The password must have at least ${PASSWORD_MIN} characters.`);
      if (password.length > PASSWORD_MAX) return refuse(`The password may have at most ${PASSWORD_MAX} characters.`);
      if (password !== (form.confirm ?? '')) return refuse('The two passwords are not the same.');
      const em = deps.em();
      const hash = tokenHash(request.params.token);
      const invitation = await openInvitation(em, hash);
      if (!invitation?.totp_secret) return invitationPage(request, reply);
      const code = form.code ?? '';
      const needsTotp = TOTP_ROLES.includes(invitation.role);
      let counter: number | null = null;
      if (needsTotp || code) {
        counter = totpCounter(deps.open(invitation.totp_secret), code, null);
        if (counter === null)
          return refuse('That code is not right: enter the 6 digits your authenticator app shows now.');
      }
      const user = await acceptInvitation(em, hash, {
        passwordHash: await hashPassword(password),
        totpSecret: counter !== null ? invitation.totp_secret : null,
        totpCounter: counter,
      });
      if (user === 'email_taken') return refuse(`${invitation.email} already has a console account.`);
      if (!user) return invitationPage(request, reply);
      await startSession(request, reply, deps, user);
      return reply.redirect(CONSOLE_PREFIX, 303);
    },
  );
}
