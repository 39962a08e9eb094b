// Every operator command, collected from the features that own them (src/<feature>/admin.ts), and
// the usage text, made from their declarations. A new command is added to its feature's list; the
// CLI and the help find it here.
import { cardCommands } from '../cards/admin.ts';
import { ledgerCommands } from '../ledger/admin.ts';
import { reconciliationCommands } from '../reconciliation/admin.ts';
import { tenantCommands } from '../tenants/admin.ts';
import { transferCommands } from '../transfers/admin.ts';
import { virtualAccountCommands } from '../virtual-accounts/admin.ts';
import { walletCommands } from '../wallet/admin.ts';
import { webhookCommands } from '../webhooks/admin.ts';
import { latestAudit } from './audit.ts';
import type { OperatorCommand } from './command.ts';
import { type FlagSpec, limit, limitFlag } from './flags.ts';

/** The CLI's own: the record of what operators changed. */
const auditCommands: OperatorCommand[] = [
  {
    name: 'audit list',
    description: 'The latest rows of admin_audit (commands that change something), newest first',
    flags: { limit: limitFlag(50) },
    async run(em, flags) {
      return { items: await latestAudit(em, flags.get('limit', limit)) };
    },
  },
];

/** In the order the usage text lists them. */
const ALL: OperatorCommand[] = [
  ...tenantCommands,
  ...walletCommands,
  ...transferCommands,
  ...virtualAccountCommands,
  ...webhookCommands,
  ...reconciliationCommands,
  ...cardCommands,
  ...ledgerCommands,
  ...auditCommands,
];

export const COMMANDS: ReadonlyMap<string, OperatorCommand> = new Map(ALL.map((command) => [command.name, command]));
if (COMMANDS.size !== ALL.length) throw new Error('two operator commands have the same name');

const shown = (name: string, spec: FlagSpec) => `--${name}${spec.value ? ` ${spec.value}` : ''}`;

/** `tenant create --name N [--wallet-minor N] [--feature F]... [--live]` */
export function synopsis(command: OperatorCommand): string {
  const flags = Object.entries(command.flags).map(([name, spec]) =>
    spec.required ? shown(name, spec) : `[${shown(name, spec)}]${spec.multiple ? '...' : ''}`,
  );
  return [command.name, ...flags].join(' ');
}

/** The synopsis, the description and a line per flag with its help. */
export function commandHelp(command: OperatorCommand): string {
  const flags = Object.entries(command.flags);
  const width = Math.max(0, ...flags.map(([name, spec]) => shown(name, spec).length));
  return [
    `  ${synopsis(command)}`,
    `      ${command.description}`,
    ...flags.map(
      ([name, spec]) =>
        `      ${shown(name, spec).padEnd(width)}  ${spec.help}${spec.default ? ` (default ${spec.default})` : ''}`,
    ),
  ].join('\n');
}

const FOOTER = `Amounts are integer kobo (100 kobo = ₦1). Output is one JSON object on stdout; messages go to
stderr. Exit codes: 0 done, 1 refused or failed (or a check that found breaches), 2 a usage error.
Test and live are separate worlds: --tenant takes the tenant's id, and --live picks its live mode
(live_tenant_id). Commands that change something are written to admin_audit (audit list).`;

/** Every command; `detail` adds each one's description and flags. */
export function usage({ detail }: { detail: boolean }): string {
  const commands = ALL.map((command) => (detail ? commandHelp(command) : `  ${synopsis(command)}`));
  return [
    'usage: npm run --silent admin -- <command> [flags]',
    '       npm run --silent admin -- <command> --help   (what the command does, and its flags)',
    '',
    commands.join(detail ? '\n\n' : '\n'),
    '',
    FOOTER,
  ].join('\n');
}
