// Budgets for the generative suites (property-based ledger models, OpenAPI fuzzing). `npm test`
// runs them at a fixed seed and a CI-sized budget, so a run is reproducible; `npm run test:long`
// (TEST_LONG=1) runs them far longer at a fresh seed, printed before the run so that any failure
// replays with `FC_SEED=<seed> npm run test:long` (or `FC_SEED=<seed> npx vitest run … <file>`).
import process from 'node:process';

/** Whether this is `npm run test:long`. */
export const longRun = process.env.TEST_LONG === '1';

/** The fixed seed of CI runs. */
export const CI_SEED = 20261124;

/**
 * The seed of this run: FC_SEED when set (to replay a failure), the fixed CI seed in `npm test`,
 * a fresh one in `npm run test:long`. Printed, with the suite's name, so a failure can be replayed.
 */
export function runSeed(suite: string): number {
  const fromEnv = process.env.FC_SEED;
  const seed =
    fromEnv !== undefined && fromEnv !== ''
      ? Number(fromEnv)
      : longRun
        ? (Date.now() ^ (process.pid << 16)) >>> 0
        : CI_SEED;
  if (!Number.isSafeInteger(seed)) throw new Error(`FC_SEED must be an integer, got ${fromEnv}`);
  console.log(`[${suite}] seed ${seed} (replay: FC_SEED=${seed})`);
  return seed;
}

/** `ci` runs in `npm test`, `long` in `npm run test:long`. */
export function budget(ci: number, long: number): number {
  return longRun ? long : ci;
}
