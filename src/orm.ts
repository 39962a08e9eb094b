// The ORM over every feature's entities (src/features.ts): what each process opens.
import { type OrmOptions, openDatabase } from './db/orm.ts';
import { ENTITIES } from './features.ts';

export { type MikroORM, type OrmOptions, migrate } from './db/orm.ts';

export function openOrm(options: OrmOptions) {
  return openDatabase(ENTITIES, options);
}
