// Activities: the side effects workflows ask for (database, banks, HTTP). Built with their
// dependencies injected, so tests run them against their own database.
import type { MikroORM } from '@mikro-orm/postgresql';

export interface ActivityDeps {
  orm: MikroORM;
}

export function createActivities(_deps: ActivityDeps) {
  return {};
}

export type Activities = ReturnType<typeof createActivities>;
