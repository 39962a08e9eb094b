// The usage text of the operator CLI, made from the commands' declarations: given the list, it
// imports no feature (src/admin-cli/registry.ts collects the features' commands).
import type { OperatorCommand } from './command.ts';
import type { FlagSpec } from './flags.ts';

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

/** Every command given; `detail` adds each one's description and flags. */
export function usageOf(all: readonly OperatorCommand[], { detail }: { detail: boolean }): string {
  const commands = all.map((command) => (detail ? commandHelp(command) : `  ${synopsis(command)}`));
  return [
    'usage: npm run --silent admin -- <command> [flags]',
    '       npm run --silent admin -- <command> --help   (what the command does, and its flags)',
    '',
    commands.join(detail ? '\n\n' : '\n'),
    '',
    FOOTER,
  ].join('\n');
}
