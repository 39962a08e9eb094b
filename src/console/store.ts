// The only code that reads or writes the console's tables (migration 0036): the tenant's people,
// invitations, sessions and failed sign-ins. Secrets arrive hashed or sealed (./secrets.ts).
import { randomUUID } from 'node:crypto';
import type { EntityManager } from '@mikro-orm/postgresql';

export const ROLES = ['owner', 'developer', 'approver', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export function isRole(value: unknown): value is Role {
  return typeof value === 'string' && (ROLES as readonly string[]).includes(value);
}

/** How long an invitation link works. */
export const INVITATION_HOURS = 72;
/** A session ends after this long without a request. */
export const SESSION_IDLE_HOURS = 12;
/** Consecutive failed sign-ins that lock an account, and for how long. */
export const LOCK_AFTER_FAILURES = 10;
export const LOCK_MINUTES = 15;
/** Failed sign-ins from one address in LOCK_MINUTES after which that address is refused for a while. */
export const ADDRESS_FAILURES = 100;

export interface ConsoleUser {
  id: string;
  tenant_id: string;
  email: string;
  role: Role;
  password_hash: string;
  totp_secret: string | null;
  totp_last_counter: number | null;
  failed_attempts: number;
  locked: boolean;
  last_signed_in_at: Date | null;
  created_at: Date;
}

const USER_COLUMNS = `id, tenant_id, email, role, password_hash, totp_secret, totp_last_counter::int as totp_last_counter,
  failed_attempts, coalesce(locked_until > now(), false) as locked, last_signed_in_at, created_at`;

export async function userByEmail(em: EntityManager, email: string): Promise<ConsoleUser | undefined> {
  const [row] = await em.execute<ConsoleUser[]>(
    `select ${USER_COLUMNS} from console_users where lower(email) = lower(?) and removed_at is null`,
    [email],
  );
  return row;
}

export async function userById(em: EntityManager, tenantId: string, id: string): Promise<ConsoleUser | undefined> {
  const [row] = await em.execute<ConsoleUser[]>(
    `select ${USER_COLUMNS} from console_users where id = ? and tenant_id = ? and removed_at is null`,
    [id, tenantId],
  );
  return row;
}

export async function listUsers(em: EntityManager, tenantId: string): Promise<ConsoleUser[]> {
  return em.execute<ConsoleUser[]>(
    `select ${USER_COLUMNS} from console_users where tenant_id = ? and removed_at is null order by created_at, id`,
    [tenantId],
  );
}

export async function activeOwners(em: EntityManager, tenantId: string): Promise<number> {
  const [row] = await em.execute<{ n: number }[]>(
    `select count(*)::int as n from console_users where tenant_id = ? and role = 'owner' and removed_at is null`,
    [tenantId],
  );
  return row?.n ?? 0;
}

/** Counts a failed sign-in against the account: the tenth in a row locks it for LOCK_MINUTES. */
export async function recordFailure(em: EntityManager, userId: string): Promise<void> {
  await em.execute(
    `update console_users
        set failed_attempts = case when failed_attempts + 1 >= ? then 0 else failed_attempts + 1 end,
            locked_until = case when failed_attempts + 1 >= ? then now() + make_interval(mins => ?) else locked_until end
      where id = ?`,
    [LOCK_AFTER_FAILURES, LOCK_AFTER_FAILURES, LOCK_MINUTES, userId],
  );
}

/** A sign-in that worked: the count starts again; `totpCounter` is the code's step, never accepted again. */
export async function recordSignIn(em: EntityManager, userId: string, totpCounter: number | null): Promise<void> {
  await em.execute(
    `update console_users set failed_attempts = 0, locked_until = null, last_signed_in_at = now(),
            totp_last_counter = coalesce(?, totp_last_counter) where id = ?`,
    [totpCounter, userId],
  );
}

/** Marks a TOTP step used (a code asked again for a live approval); false when it already was. */
export async function useTotpCounter(em: EntityManager, userId: string, counter: number): Promise<boolean> {
  const rows = await em.execute<{ id: string }[]>(
    `update console_users set totp_last_counter = ?
      where id = ? and (totp_last_counter is null or totp_last_counter < ?) returning id`,
    [counter, userId, counter],
  );
  return rows.length === 1;
}

export async function addressFailures(em: EntityManager, ip: string): Promise<number> {
  const [row] = await em.execute<{ n: number }[]>(
    `select count(*)::int as n from console_sign_in_failures where ip = ? and at > now() - make_interval(mins => ?)`,
    [ip, LOCK_MINUTES],
  );
  return row?.n ?? 0;
}

export async function recordAddressFailure(em: EntityManager, ip: string, email: string): Promise<void> {
  await em.execute(`delete from console_sign_in_failures where ip = ? and at < now() - interval '1 day'`, [ip]);
  await em.execute(`insert into console_sign_in_failures (ip, email) values (?, ?)`, [ip, email.slice(0, 320)]);
}

export async function changeRole(em: EntityManager, tenantId: string, userId: string, role: Role): Promise<boolean> {
  const rows = await em.execute<{ id: string }[]>(
    `update console_users set role = ?, updated_at = now() where id = ? and tenant_id = ? and removed_at is null returning id`,
    [role, userId, tenantId],
  );
  if (rows.length) await revokeUserSessions(em, userId);
  return rows.length === 1;
}

export async function removeUser(em: EntityManager, tenantId: string, userId: string): Promise<boolean> {
  const rows = await em.execute<{ id: string }[]>(
    `update console_users set removed_at = now(), updated_at = now()
      where id = ? and tenant_id = ? and removed_at is null returning id`,
    [userId, tenantId],
  );
  if (rows.length) await revokeUserSessions(em, userId);
  return rows.length === 1;
}

// Invitations.

export interface Invitation {
  id: string;
  tenant_id: string;
  email: string;
  role: Role;
  invited_by: string;
  totp_secret: string | null;
  expires_at: Date;
  accepted_at: Date | null;
  created_at: Date;
}

export async function createInvitation(
  em: EntityManager,
  input: { tenantId: string; email: string; role: Role; invitedBy: string; tokenHash: string },
): Promise<Invitation> {
  const [row] = await em.execute<Invitation[]>(
    `insert into console_invitations (id, tenant_id, email, role, token_hash, invited_by, expires_at)
     values (?, ?, ?, ?, ?, ?, now() + make_interval(hours => ?))
     returning id, tenant_id, email, role, invited_by, totp_secret, expires_at, accepted_at, created_at`,
    [randomUUID(), input.tenantId, input.email, input.role, input.tokenHash, input.invitedBy, INVITATION_HOURS],
  );
  return row!;
}

/** The invitation a link's token is for, while it can still be used. */
export async function openInvitation(em: EntityManager, tokenHash: string): Promise<Invitation | undefined> {
  const [row] = await em.execute<Invitation[]>(
    `select id, tenant_id, email, role, invited_by, totp_secret, expires_at, accepted_at, created_at
       from console_invitations where token_hash = ? and accepted_at is null and expires_at > now()`,
    [tokenHash],
  );
  return row;
}

/** The sealed TOTP secret shown on the invitation's page; the first one stored wins. */
export async function invitationTotpSecret(em: EntityManager, id: string, sealed: string): Promise<string> {
  const [row] = await em.execute<{ totp_secret: string }[]>(
    `update console_invitations set totp_secret = coalesce(totp_secret, ?) where id = ? returning totp_secret`,
    [sealed, id],
  );
  return row!.totp_secret;
}

export async function listInvitations(em: EntityManager, tenantId: string): Promise<Invitation[]> {
  return em.execute<Invitation[]>(
    `select id, tenant_id, email, role, invited_by, null as totp_secret, expires_at, accepted_at, created_at
       from console_invitations where tenant_id = ? and accepted_at is null and expires_at > now()
      order by created_at desc limit 100`,
    [tenantId],
  );
}

/**
 * Uses the invitation (once: a second use finds it taken) and makes its person: undefined when the
 * link was used or has expired meanwhile, 'email_taken' when an active person has the email.
 */
export async function acceptInvitation(
  em: EntityManager,
  tokenHash: string,
  account: { passwordHash: string; totpSecret: string | null; totpCounter: number | null },
): Promise<ConsoleUser | 'email_taken' | undefined> {
  return em.transactional(async (tx) => {
    const [invitation] = await tx.execute<Invitation[]>(
      `update console_invitations set accepted_at = now()
        where token_hash = ? and accepted_at is null and expires_at > now()
        returning id, tenant_id, email, role, invited_by, totp_secret, expires_at, accepted_at, created_at`,
      [tokenHash],
    );
    if (!invitation) return undefined;
    if (await userByEmail(tx, invitation.email)) return 'email_taken';
    const id = randomUUID();
    await tx.execute(
      `insert into console_users (id, tenant_id, email, role, password_hash, totp_secret, totp_last_counter)
       values (?, ?, ?, ?, ?, ?, ?)`,
      [
        id,
        invitation.tenant_id,
        invitation.email,
        invitation.role,
        account.passwordHash,
        account.totpSecret,
        account.totpCounter,
      ],
    );
    return (await userById(tx, invitation.tenant_id, id))!;
  });
}

// Sessions.

export interface Session {
  id: string;
  user_id: string;
  csrf_token: string;
  mode: 'test' | 'live';
  tenant_id: string;
  email: string;
  role: Role;
  totp_secret: string | null;
  totp_last_counter: number | null;
}

export async function createSession(
  em: EntityManager,
  input: { tokenHash: string; userId: string; csrfToken: string; ip: string; userAgent: string },
): Promise<void> {
  await em.execute(
    `insert into console_sessions (id, token_hash, user_id, csrf_token, ip, user_agent) values (?, ?, ?, ?, ?, ?)`,
    [randomUUID(), input.tokenHash, input.userId, input.csrfToken, input.ip, input.userAgent.slice(0, 500)],
  );
}

/**
 * The live session a cookie's token is for, with its person: none once signed out, revoked, idle
 * for SESSION_IDLE_HOURS, or its person removed. A request refreshes `last_seen_at` (once a minute).
 */
export async function sessionByToken(em: EntityManager, tokenHash: string): Promise<Session | undefined> {
  const [row] = await em.execute<Session[]>(
    `update console_sessions s set last_seen_at = case when s.last_seen_at < now() - interval '1 minute' then now() else s.last_seen_at end
       from console_users u
      where s.token_hash = ? and u.id = s.user_id and s.revoked_at is null and u.removed_at is null
        and s.last_seen_at > now() - make_interval(hours => ?)
      returning s.id, s.user_id, s.csrf_token, s.mode, u.tenant_id, u.email, u.role, u.totp_secret,
                u.totp_last_counter::int as totp_last_counter`,
    [tokenHash, SESSION_IDLE_HOURS],
  );
  return row;
}

export async function setSessionMode(em: EntityManager, sessionId: string, mode: 'test' | 'live'): Promise<void> {
  await em.execute(`update console_sessions set mode = ? where id = ?`, [mode, sessionId]);
}

export async function revokeSession(em: EntityManager, sessionId: string): Promise<void> {
  await em.execute(`update console_sessions set revoked_at = now() where id = ? and revoked_at is null`, [sessionId]);
}

export async function revokeUserSessions(em: EntityManager, userId: string): Promise<void> {
  await em.execute(`update console_sessions set revoked_at = now() where user_id = ? and revoked_at is null`, [userId]);
}
