// The console's operator command: `tenant invite` prints a one-time invitation link (decisions §22).
import type { OperatorCommand } from '../admin/command.ts';
import { flag, uuid } from '../admin/flags.ts';
import { invite } from './team.ts';

/** Where invitation links point: CONSOLE_URL, else the API's own address on this machine. */
export function consoleUrlOf(config: { CONSOLE_URL?: string | undefined; PORT: number }): string {
  return config.CONSOLE_URL ?? `http://127.0.0.1:${config.PORT}`;
}

export const consoleCommands: readonly OperatorCommand[] = [
  {
    name: 'tenant invite',
    description: "A one-time link (72 h) for a person to join the tenant's console with a role",
    mutates: true,
    flags: {
      tenant: flag.required('ID', "the tenant's id (tenant_id)"),
      email: flag.required('E', 'their email address (they sign in with it)'),
      role: flag.required('R', 'owner, developer, approver or viewer'),
    },
    async run(em, flags, config) {
      const operator = flags.operator();
      return invite(
        em,
        {
          tenantId: flags.get('tenant', uuid('a tenant id')),
          email: flags.get('email'),
          role: flags.get('role'),
          consoleUrl: consoleUrlOf(config),
        },
        { actor: { type: 'operator', id: operator, name: operator }, ip: null, requestId: null },
      );
    },
  },
];
