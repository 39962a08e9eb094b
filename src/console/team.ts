// The tenant's team (decisions §22): invitations (from the operator CLI's `tenant invite` or an
// owner in the console), role changes and removals, each recorded in the tenant's audit log (its
// test mode's, which is the tenant's own row) with who did it. A role change or removal ends the
// member's sessions at once.
import type { EntityManager } from '@mikro-orm/postgresql';
import { type AuditActor, recordAuditEntry } from '../audit/log.ts';
import { Refusal } from '../lib/refusal.ts';
import { lockTenant, tenantMode } from '../tenants/tenants.ts';
import { TOTP_ROLES } from './roles.ts';
import { newToken, tokenHash } from './secrets.ts';
import {
  type Role,
  activeOwners,
  changeRole,
  createInvitation,
  isRole,
  removeUser,
  userByEmail,
  userById,
} from './store.ts';

export type TeamErrorCode =
  'not_found' | 'invalid_email' | 'invalid_role' | 'email_taken' | 'last_owner' | 'needs_totp';
export class TeamError extends Refusal<TeamErrorCode> {}

/** A plausible address: one @, no spaces or angle brackets, at most 254 characters. */
const EMAIL = /^[^\s@<>"]{1,64}@[^\s@<>"]{1,189}\.[^\s@<>".]{2,63}$/;

export function normaliseEmail(value: string): string | undefined {
  const email = value.trim().toLowerCase();
  return email.length <= 254 && EMAIL.test(email) ? email : undefined;
}

export interface Where {
  actor: AuditActor;
  ip: string | null;
  requestId: string | null;
}

/** Makes an invitation and answers its one-time link (shown once: only its hash is kept). */
export async function invite(
  em: EntityManager,
  input: { tenantId: string; email: string; role: string; consoleUrl: string },
  where: Where,
): Promise<{ link: string; email: string; role: Role; expires_at: string; tenant_id: string }> {
  const email = normaliseEmail(input.email);
  if (!email) throw new TeamError('invalid_email', 'email must be an email address');
  if (!isRole(input.role))
    throw new TeamError('invalid_role', 'role must be one of owner, developer, approver, viewer');
  const role = input.role;
  return em.transactional(async (tx) => {
    const tenant = await tenantMode(tx, input.tenantId, 'test');
    if (!tenant) throw new TeamError('not_found', `no tenant ${input.tenantId}`);
    if (await userByEmail(tx, email)) throw new TeamError('email_taken', `${email} already has a console account`);
    const token = newToken();
    const invitation = await createInvitation(tx, {
      tenantId: tenant.id,
      email,
      role,
      invitedBy: where.actor.name,
      tokenHash: tokenHash(token),
    });
    await recordAuditEntry(tx, {
      tenantId: tenant.id,
      action: 'team.invited',
      actor: where.actor,
      target: { type: 'invitation', id: invitation.id },
      ip: where.ip,
      requestId: where.requestId,
      details: { email, role },
    });
    return {
      link: `${input.consoleUrl.replace(/\/$/, '')}/dashboard/invitations/${token}`,
      email,
      role,
      expires_at: new Date(invitation.expires_at).toISOString(),
      tenant_id: tenant.id,
    };
  });
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** A member of the tenant by id (anything but a uuid is no member). */
async function memberOf(em: EntityManager, tenantId: string, userId: string) {
  const member = UUID.test(userId) ? await userById(em, tenantId, userId) : undefined;
  if (!member) throw new TeamError('not_found', 'no such member');
  return member;
}

/** Gives a member another role; their sessions end. An owner stays: the last one keeps the role. */
export async function setRole(em: EntityManager, tenantId: string, userId: string, role: string, where: Where) {
  if (!isRole(role)) throw new TeamError('invalid_role', 'role must be one of owner, developer, approver, viewer');
  await em.transactional(async (tx) => {
    // One change of the team at a time (two owners demoting each other leave one owner).
    await lockTenant(tx, tenantId);
    const member = await memberOf(tx, tenantId, userId);
    if (member.role === role) return;
    if (member.role === 'owner' && (await activeOwners(tx, tenantId)) <= 1) {
      throw new TeamError('last_owner', 'the last owner cannot be given another role: make another owner first');
    }
    if (TOTP_ROLES.includes(role) && !member.totp_secret) {
      throw new TeamError(
        'needs_totp',
        `${role} needs two-factor sign-in, which ${member.email} has not set up: invite them again`,
      );
    }
    await changeRole(tx, tenantId, userId, role);
    await recordAuditEntry(tx, {
      tenantId,
      action: 'team.role_changed',
      actor: where.actor,
      target: { type: 'console_user', id: userId },
      ip: where.ip,
      requestId: where.requestId,
      details: { email: member.email, from: member.role, to: role },
    });
  });
}

/** Removes a member; their sessions end. The last owner cannot be removed. */
export async function remove(em: EntityManager, tenantId: string, userId: string, where: Where) {
  await em.transactional(async (tx) => {
    // One change of the team at a time (two owners demoting each other leave one owner).
    await lockTenant(tx, tenantId);
    const member = await memberOf(tx, tenantId, userId);
    if (member.role === 'owner' && (await activeOwners(tx, tenantId)) <= 1) {
      throw new TeamError('last_owner', 'the last owner cannot be removed');
    }
    await removeUser(tx, tenantId, userId);
    await recordAuditEntry(tx, {
      tenantId,
      action: 'team.removed',
      actor: where.actor,
      target: { type: 'console_user', id: userId },
      ip: where.ip,
      requestId: where.requestId,
      details: { email: member.email, role: member.role },
    });
  });
}
