// A migration is its SQL: the statements run in order, in the migrator's one transaction. The name
// is what the migrations table records, so it never changes once released.
import type { MigrationObject } from '@mikro-orm/core';
import { Migration } from '@mikro-orm/migrations';

export function sqlMigration(name: string, statements: readonly string[]): MigrationObject {
  return {
    name,
    class: class extends Migration {
      override name = name;

      override up(): void {
        for (const statement of statements) this.addSql(statement);
      }
    },
  };
}
