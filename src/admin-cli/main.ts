// Operator CLI: `npm run --silent admin -- <command>`. Prints exactly one JSON object on stdout (or
// the CSV an export was asked for); human-readable text and errors go to stderr. Connects to the
// same database as the running stack (DATABASE_URL, or the embedded PostgreSQL of `npm start`) with
// no extra flags. The commands are the features' own (./registry.ts); how each ends maps to
// its exit code in src/admin/errors.ts.
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { openOrm } from '../orm.ts';
import { assertNodeVersion } from '../runtime/node-version.ts';
import { recordAudit } from '../admin/audit.ts';
import { type AuditOutcome, endingOf } from '../admin/errors.ts';
import { Flags, parseOptions } from '../admin/flags.ts';
import { COMMANDS, commandHelp, usage } from './registry.ts';

export async function main(argv: string[]): Promise<number> {
  const [group, action, ...rest] = argv;
  if (group === undefined || group === 'help' || group === '--help') {
    console.error(usage({ detail: true }));
    return 0;
  }
  const name = `${group} ${action ?? ''}`.trim();
  const command = COMMANDS.get(name);
  if (!command) {
    console.error(`unknown command '${name}'\n\n${usage({ detail: false })}`);
    return 2;
  }
  if (rest.includes('--help')) {
    console.error(commandHelp(command));
    return 0;
  }
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({
      args: rest,
      options: parseOptions(command.flags),
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    console.error(`${name}: ${(error as Error).message}\n\n${commandHelp(command)}`);
    return 2;
  }
  const flags = new Flags({ ...values }, command.flags);

  let config;
  try {
    config = loadConfig();
  } catch (error) {
    console.error((error as Error).message);
    return 2;
  }
  let orm;
  try {
    orm = await openOrm({ databaseUrl: config.databaseUrl, poolMax: 2 });
    await orm.em.fork().execute('select 1');
  } catch (error) {
    console.error(
      `cannot reach the database at ${config.databaseUrl.replace(/\/\/[^@]*@/, '//…@')}: ${(error as Error).message}. ` +
        'Is the stack running (npm start), or DATABASE_URL set?',
    );
    await orm?.close();
    return 1;
  }
  // A command that changes something is written to admin_audit however it ends.
  const audit = async (outcome: AuditOutcome, error?: string) => {
    if (!command.mutates) return;
    try {
      await recordAudit(orm.em.fork(), {
        operator: flags.operator(),
        command: name,
        arguments: flags.values,
        outcome,
        ...(error !== undefined ? { error } : {}),
      });
    } catch (auditError) {
      console.error(`${name}: could not be written to admin_audit: ${(auditError as Error).message}`);
    }
  };
  try {
    flags.checkRequired();
    const result = await command.run(orm.em.fork(), flags, config);
    await audit('succeeded');
    process.stdout.write(command.text?.(result, flags) ?? `${JSON.stringify(result)}\n`);
    return command.exitCodeOf?.(result) ?? 0;
  } catch (error) {
    const ending = endingOf(name, error);
    await audit(ending.outcome, ending.message);
    console.error(ending.line);
    return ending.exitCode;
  } finally {
    await orm.close();
  }
}

assertNodeVersion();
process.exitCode = await main(process.argv.slice(2));
