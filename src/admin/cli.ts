// Operator CLI: `npm run --silent admin -- <command>`. Prints exactly one JSON object on stdout;
// human-readable text and errors go to stderr. Connects to the same database as the running stack
// (DATABASE_URL, or the embedded PostgreSQL of `npm start`) with no extra flags.
import { randomUUID } from 'node:crypto';
import { parseArgs } from 'node:util';
import { loadConfig } from '../config.ts';
import { openOrm } from '../db/orm.ts';
import { assertNodeVersion } from '../runtime/node-version.ts';
import { type AdminCommand, AdminUsageError, COMMANDS, USAGE, operatorOf } from './commands.ts';

export async function main(argv: string[]): Promise<number> {
  const [group, action, ...rest] = argv;
  const name = `${group ?? ''} ${action ?? ''}`.trim();
  const command: AdminCommand | undefined = COMMANDS[name];
  if (!command) {
    console.error(
      group === undefined || group === 'help' || group === '--help' ? USAGE : `unknown command '${name}'\n\n${USAGE}`,
    );
    return group === undefined || group === 'help' || group === '--help' ? 0 : 2;
  }
  let values: Record<string, unknown>;
  try {
    ({ values } = parseArgs({ args: rest, options: command.options, strict: true, allowPositionals: false }));
  } catch (error) {
    console.error(`${name}: ${(error as Error).message}\n\n${USAGE}`);
    return 2;
  }

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
  // A mutating command is written to admin_audit however it ends (src/db/migrations/0012-admin-audit.ts).
  const audit = async (outcome: 'succeeded' | 'refused' | 'failed', error?: string) => {
    if (!command.mutates) return;
    try {
      await orm.em
        .fork()
        .execute(
          'insert into admin_audit (id, operator, command, arguments, outcome, error) values (?, ?, ?, ?, ?, ?)',
          [randomUUID(), operatorOf(values), name, JSON.stringify(values), outcome, error ?? null],
        );
    } catch (auditError) {
      console.error(`${name}: could not be written to admin_audit: ${(auditError as Error).message}`);
    }
  };
  try {
    const result = await command.run(orm.em.fork(), values, config);
    await audit('succeeded');
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return command.exitCodeOf?.(result) ?? 0;
  } catch (error) {
    if (error instanceof AdminUsageError) {
      await audit('refused', error.message);
      console.error(`${name}: ${error.message}`);
      return 2;
    }
    await audit('failed', (error as Error).message);
    console.error(`${name} failed: ${(error as Error).message}`);
    return 1;
  } finally {
    await orm.close();
  }
}

assertNodeVersion();
process.exitCode = await main(process.argv.slice(2));
