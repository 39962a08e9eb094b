// A person's role, as the API's scopes (decisions §22): the console acts with these, so that a page
// or form may do what a key with the same scopes may, and no more (src/http/scopes.ts).
import { type Scope, holdsScope } from '../http/scopes.ts';
import type { Role } from './store.ts';

export const ROLE_SCOPES: Readonly<Record<Role, readonly Scope[]>> = {
  owner: ['*'],
  developer: ['read', 'keys:write', 'webhooks:write'],
  approver: ['read', 'transfers:approve'],
  viewer: ['read'],
};

/** Roles that must sign in with a TOTP code as well as a password. */
export const TOTP_ROLES: readonly Role[] = ['owner', 'approver'];

export const ROLE_DESCRIPTIONS: Readonly<Record<Role, string>> = {
  owner: 'Everything, and the team',
  developer: 'API keys, webhooks, and reading everything',
  approver: 'Approving or rejecting held payouts, and reading everything',
  viewer: 'Reading everything',
};

export function roleHolds(role: Role, scope: Scope): boolean {
  return holdsScope(ROLE_SCOPES[role], scope);
}
