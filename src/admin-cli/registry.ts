// Every operator command, collected from the features that declare them (src/features.ts; each
// feature's own are in its src/<feature>/admin.ts), and the usage text made from their
// declarations. A new command is added to its feature's list; the CLI and the help find it here.
import type { OperatorCommand } from '../admin/command.ts';
import { commandHelp, synopsis, usageOf } from '../admin/usage.ts';
import { FEATURES } from '../features.ts';

export { commandHelp, synopsis };

/** In the order the usage text lists them: the features' order. */
const ALL: readonly OperatorCommand[] = FEATURES.flatMap((feature) => feature.commands ?? []);

export const COMMANDS: ReadonlyMap<string, OperatorCommand> = new Map(ALL.map((command) => [command.name, command]));
if (COMMANDS.size !== ALL.length) throw new Error('two operator commands have the same name');

/** Every command; `detail` adds each one's description and flags. */
export function usage(options: { detail: boolean }): string {
  return usageOf(ALL, options);
}
