// What a process's configuration loader refuses of an environment, as the lines of its ConfigError.
import { ConfigError } from '../../src/runtime/environment.ts';

/** The ConfigError's lines, or [] when the environment is accepted. */
export function configIssues(load: (env: NodeJS.ProcessEnv) => unknown, env: NodeJS.ProcessEnv): string[] {
  try {
    load(env);
    return [];
  } catch (error) {
    if (!(error instanceof ConfigError)) throw error;
    return error.issues;
  }
}
