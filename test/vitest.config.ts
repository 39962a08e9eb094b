// vitest: one embedded PostgreSQL and one Temporal dev server for the whole run (globalSetup);
// each test file gets its own freshly migrated database. Forks, not threads: the Temporal SDK's
// native parts do not like worker threads.
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { defineConfig } from 'vitest/config';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');

export default defineConfig({
  root,
  test: {
    include: ['test/**/*.test.ts'],
    globalSetup: ['test/support/global-setup.ts'],
    pool: 'forks',
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    reporters: [process.env.CI ? 'verbose' : 'default', './test/support/summary-reporter.ts'],
  },
});
