// vitest: one embedded PostgreSQL and one Temporal dev server for the whole run (globalSetup);
// each test file gets its own freshly migrated database. Forks, not threads: the Temporal SDK's
// native parts do not like worker threads.
// Four groups, one after another: every test file two at a time; then the bulk-transfer files,
// whose batch of 1,000 keeps both cores busy for a minute and a half; then the webhook flood,
// which measures creates' latency while deliveries flood the webhook worker and so must not share
// the machine with either; then the batch flood, which measures live creates' latency while a
// tenant floods batches, alone for the same reason.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { configDefaults, defineConfig } from 'vitest/config';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

const BULK = ['test/integration/transfer-batches.test.ts', 'test/integration/transfer-batch-crash.test.ts'];
const FLOOD = ['test/integration/webhook-flood.test.ts'];
const BATCH_FLOOD = ['test/integration/batch-flood.test.ts'];

export default defineConfig({
  root,
  test: {
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    reporters: [process.env.CI ? 'verbose' : 'default', './test/support/summary-reporter.ts'],
    projects: [
      {
        extends: true,
        test: {
          name: 'gateway',
          include: ['test/**/*.test.ts'],
          exclude: [...configDefaults.exclude, ...BULK, ...FLOOD, ...BATCH_FLOOD],
          sequence: { groupOrder: 0 },
        },
      },
      { extends: true, test: { name: 'bulk', include: BULK, sequence: { groupOrder: 1 } } },
      { extends: true, test: { name: 'flood', include: FLOOD, sequence: { groupOrder: 2 } } },
      { extends: true, test: { name: 'batch-flood', include: BATCH_FLOOD, sequence: { groupOrder: 3 } } },
    ],
  },
});
