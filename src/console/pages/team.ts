// The team (decisions §22): any member sees its people and open invitations; owners invite (the
// link shown once, in the answer to the form), change roles and remove members through ./team.ts,
// which records each in the audit log and ends the member's sessions. The console's own tables are
// the one thing a page reads without the API.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { ApiRefusal } from '../api.ts';
import type { ConsoleDeps } from '../plugin.ts';
import { sessionOf, withMode } from '../plugin.ts';
import { sendPage } from '../render.ts';
import { ROLE_DESCRIPTIONS } from '../roles.ts';
import { consoleRoutes, formOf, pathId } from '../routes.ts';
import { ROLES, listInvitations, listUsers } from '../store.ts';
import { TeamError, type TeamErrorCode, type Where, invite, remove, setRole } from '../team.ts';

const NOTICES = {
  'role-changed': 'The role was changed; their sessions ended, so they sign in again.',
  removed: 'The member was removed and signed out.',
};

const STATUS: Record<TeamErrorCode, number> = {
  not_found: 404,
  invalid_email: 400,
  invalid_role: 400,
  email_taken: 409,
  last_owner: 409,
  needs_totp: 409,
};

/** A team change as a page: TeamError's status and message. */
async function teamChange<T>(change: () => Promise<T>): Promise<T> {
  try {
    return await change();
  } catch (error) {
    if (error instanceof TeamError) throw new ApiRefusal(STATUS[error.code], error.message, error.code);
    throw error;
  }
}

function ownerOnly(request: FastifyRequest): void {
  if (sessionOf(request).role !== 'owner') {
    throw new ApiRefusal(403, 'Only an owner can change the team.', 'forbidden');
  }
}

function whereOf(request: FastifyRequest): Where {
  const session = sessionOf(request);
  return {
    actor: { type: 'user', id: session.user_id, name: session.email },
    ip: request.ip,
    requestId: request.id,
  };
}

export function teamPages(scope: FastifyInstance, deps: ConsoleDeps): void {
  const route = consoleRoutes(scope);

  route.get('/team', async (request, reply) =>
    withMode(request, reply, deps, 'Team', 'team', async (frame) => {
      const session = sessionOf(request);
      const [members, invitations] = await Promise.all([
        listUsers(deps.em(), session.tenant_id),
        listInvitations(deps.em(), session.tenant_id),
      ]);
      return sendPage(reply, 'team/index', frame, {
        members: members.map((member) => ({
          id: member.id,
          email: member.email,
          role: member.role,
          totp: member.totp_secret !== null,
          last_signed_in_at: member.last_signed_in_at,
          you: member.id === session.user_id,
        })),
        invitations,
        roles: ROLES,
        descriptions: ROLE_DESCRIPTIONS,
        owner: session.role === 'owner',
        notices: NOTICES,
      });
    }),
  );

  route.post('/team/invitations', async (request, reply) =>
    withMode(request, reply, deps, 'Invitation made', 'team', async (frame) => {
      ownerOnly(request);
      const form = formOf(request);
      const made = await teamChange(() =>
        invite(
          deps.em(),
          {
            tenantId: sessionOf(request).tenant_id,
            email: form.email ?? '',
            role: form.role ?? '',
            consoleUrl: deps.consoleUrl(request),
          },
          whereOf(request),
        ),
      );
      return sendPage(reply, 'team/invited', frame, { invitation: made }, 201);
    }),
  );

  route.post('/team/:userId/role', async (request, reply) =>
    withMode(request, reply, deps, 'Team', 'team', async () => {
      ownerOnly(request);
      const userId = pathId((request.params as { userId?: string }).userId);
      if (!userId) throw new ApiRefusal(404, 'There is no such member.', 'not_found');
      await teamChange(() =>
        setRole(deps.em(), sessionOf(request).tenant_id, userId, formOf(request).role ?? '', whereOf(request)),
      );
      return reply.redirect('/dashboard/team?notice=role-changed', 303);
    }),
  );

  route.post('/team/:userId/remove', async (request, reply) =>
    withMode(request, reply, deps, 'Team', 'team', async () => {
      ownerOnly(request);
      const userId = pathId((request.params as { userId?: string }).userId);
      if (!userId) throw new ApiRefusal(404, 'There is no such member.', 'not_found');
      await teamChange(() => remove(deps.em(), sessionOf(request).tenant_id, userId, whereOf(request)));
      return reply.redirect('/dashboard/team?notice=removed', 303);
    }),
  );
}
