// Activities: the side effects workflows ask for (database, banks, HTTP). Built with their
// dependencies injected, so tests run them against their own database and sandbox bank.
import type { MikroORM } from '@mikro-orm/postgresql';
import type { Providers } from '../src/providers/registry.ts';
import { createTransferActivities } from './transfers.ts';

export interface ActivityDeps {
  orm: MikroORM;
  providers: Providers;
}

export function createActivities(deps: ActivityDeps) {
  return { ...createTransferActivities(deps) };
}

export type Activities = ReturnType<typeof createActivities>;
