// What an operator command is: its name, a line of description, its flags, whether it changes
// something (then admin_audit records it), and what it does. Each feature declares its own in
// `src/<feature>/admin.ts`; src/admin-cli/registry.ts collects them.
import type { EntityManager } from '@mikro-orm/postgresql';
import { Client, Connection } from '@temporalio/client';
import type { Config } from '../config.ts';
import type { FlagSpecs, Flags } from './flags.ts';

export interface OperatorCommand {
  /** Two words, as typed: `tenant create`. */
  name: string;
  /** One line for the usage text. */
  description: string;
  flags: FlagSpecs;
  /** Changes something: written to admin_audit with its operator, arguments and outcome. */
  mutates?: boolean;
  /** The JSON object the CLI prints. */
  run(em: EntityManager, flags: Flags, config: Config): Promise<object>;
  /** What to print instead of the JSON object (a CSV export); undefined prints the JSON. */
  text?(result: object, flags: Flags): string | undefined;
  /** The exit code for a result that was printed (0 when absent): a check that found breaches says 1. */
  exitCodeOf?(result: object): number;
}

/** A Temporal client for the length of `work`, on the stack's address and namespace. */
export async function withTemporal<T>(config: Config, work: (client: Client) => Promise<T>): Promise<T> {
  const connection = await Connection.connect({ address: config.temporalAddress, connectTimeout: 5_000 });
  try {
    return await work(new Client({ connection, namespace: config.TEMPORAL_NAMESPACE }));
  } finally {
    await connection.close();
  }
}
