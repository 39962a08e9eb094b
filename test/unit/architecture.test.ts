// The architecture check (docs/architecture.md): the import rules of scripts/dependency-cruiser.json
// over the product's code (layers, feature stores, and the processes' boundaries: the sandbox bank
// shares nothing with the API but its client contract), and table ownership on the SQL and ORM
// writes the code contains. Each
// rule is also shown to fail on a violation planted for the purpose, so a check that cannot fail
// never passes for the wrong reason.
import { randomUUID } from 'node:crypto';
import { readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { cruise, type ICruiseResult, type IConfiguration } from 'dependency-cruiser';
import { describe, expect, it } from 'vitest';
import { PROJECT_ROOT } from '../../src/stack/tools.ts';
import {
  TABLE_OWNERS,
  entityTables,
  ownershipViolations,
  productSources,
  tableWrites,
} from '../support/table-owners.ts';

const config = createRequire(import.meta.url)(join(PROJECT_ROOT, 'scripts/dependency-cruiser.json')) as IConfiguration;

async function importViolations(paths: string[]): Promise<string[]> {
  const cwd = process.cwd();
  process.chdir(PROJECT_ROOT);
  try {
    const { output } = await cruise(paths, {
      ...config.options,
      validate: true,
      ruleSet: { forbidden: config.forbidden ?? [] },
    });
    const result = output as ICruiseResult;
    return result.summary.violations.map((violation) => `${violation.rule.name}: ${violation.from} → ${violation.to}`);
  } finally {
    process.chdir(cwd);
  }
}

/** Cruises `path` with `source` planted there for the duration. */
async function plantedImportViolations(path: string, source: string): Promise<string[]> {
  const file = join(PROJECT_ROOT, path);
  writeFileSync(file, source);
  try {
    return await importViolations([path]);
  } finally {
    rmSync(file, { force: true });
  }
}

describe('import rules', () => {
  it('hold over the whole product', async () => {
    expect(await importViolations(['src', 'workflows', 'activities', 'worker'])).toEqual([]);
  }, 60_000);

  // Each case: the rule, the folder a file is planted in, and what the file imports (a value).
  const planted = `planted-violation-${randomUUID().slice(0, 8)}`;
  it.each([
    ['workflows-import-types-only', 'workflows', '../src/db/pages.ts', 'pageOf'],
    ['workflows-deterministic', 'workflows', 'node:crypto', 'randomUUID'],
    ['workflows-import-no-activities', 'workflows', '../activities/index.ts', 'createActivities'],
    ['domain-is-pure', 'src/lib', '../db/pages.ts', 'pageOf'],
    ['feature-store-is-private', 'src/webhooks', '../transfers/store.ts', 'findTransfer'],
    [
      'only-the-worker-runs-activities',
      'src/transfers',
      '../../activities/transfers/transfers.ts',
      'createTransferActivities',
    ],
    [
      'no-workflow-implementation-outside-workflows',
      'src/http',
      '../../workflows/transfers/transfer.ts',
      'transferWorkflow',
    ],
    ['activities-use-their-own-feature-store', 'activities', '../src/transfers/store.ts', 'findTransfer'],
    ['activity-parts-use-their-own-feature-store', 'activities/transfers', '../../src/cards/store.ts', 'findCard'],
    ['feature-store-is-private', 'src/cards', '../transfers/batch-store.ts', 'findBatch'],
    ['shared-modules-import-no-feature', 'src/db', '../transfers/service.ts', 'TransferService'],
    ['shared-modules-import-no-feature', 'src/http', '../tenants/tenants.ts', 'resolveApiKey'],
    ['shared-modules-import-no-feature', 'src/admin', '../cards/admin.ts', 'cardCommands'],
    ['shared-modules-import-no-feature', 'src/events', '../transfers/schemas.ts', 'TransferItemView'],
    // A module that imports itself: the shortest cycle of value imports.
    ['no-circular', 'src/lib', `./${planted}.ts`, 'x'],
    ['no-test-code-in-the-product', 'src/transfers', '../../test/support/eventually.ts', 'eventually'],
    ['sandbox-bank-stands-alone', 'src/sandbox-bank', '../config.ts', 'loadConfig'],
    ['runtime-and-contract-stand-alone', 'src/runtime', '../config.ts', 'loadConfig'],
    ['no-process-reaches-the-sandbox-bank', 'src/transfers', '../sandbox-bank/banks.ts', 'BANKS'],
    ['client-stands-alone', 'src/client', '../http/errors.ts', 'ERRORS'],
    ['client-stands-alone', 'src/client', 'node:crypto', 'randomUUID'],
    ['tenant-cli-on-the-client', 'src/client/cli', '../../http/errors.ts', 'ERRORS'],
  ])(
    '%s fails on a planted violation (%s importing %s)',
    async (rule, folder, specifier, name) => {
      const path = `${folder}/${planted}.ts`;
      const violations = await plantedImportViolations(
        path,
        `import { ${name} } from '${specifier}';\nexport const x = ${name};\n`,
      );
      expect(violations.some((violation) => violation.startsWith(`${rule}: ${path} → `))).toBe(true);
    },
    60_000,
  );
});

describe('table ownership', () => {
  const sources = productSources(PROJECT_ROOT);
  const entities = entityTables(sources);

  it('names an owner for every table the migrations create, and for no other', () => {
    const created = new Set<string>();
    for (const migration of readdirSync(join(PROJECT_ROOT, 'src/db/migrations'))) {
      const text = readFileSync(join(PROJECT_ROOT, 'src/db/migrations', migration), 'utf8');
      for (const match of text.matchAll(/create (?:unlogged )?table (?:if not exists )?([a-z_]+)/gi))
        created.add(match[1]!);
    }
    expect([...created].sort()).toEqual(Object.keys(TABLE_OWNERS).sort());
  });

  it('knows the entity of every table an entity maps', () => {
    for (const table of entities.values()) expect(Object.keys(TABLE_OWNERS)).toContain(table);
    expect(entities.get('Transfer')).toBe('transfers');
    expect(entities.get('Tenant')).toBe('tenants');
  });

  it('only the owner writes its tables', () => {
    const writes = [...sources].flatMap(([file, text]) => tableWrites(file, text, entities));
    // The reader sees the writes it must: the ledger's own and the events insert.
    expect(writes.some((write) => write.file === 'src/ledger/ledger.ts' && write.table === 'postings')).toBe(true);
    expect(writes.some((write) => write.file === 'src/events/events.ts' && write.table === 'events')).toBe(true);
    expect(
      ownershipViolations(writes).map((write) => `${write.file}:${write.line} ${write.how} ${write.table}`),
    ).toEqual([]);
  });

  // What another module's code writes, how the reader names the write, and the table.
  const plantedWrites: Record<string, [code: string, how: string, table: string]> = {
    'raw SQL': ["em.execute('insert into postings (entry_id) values (?)', [id])", 'insert into', 'postings'],
    'a template': ['em.execute(`update ledger_accounts set balance_minor = ${x}`)', 'update', 'ledger_accounts'],
    delete: ["tx.execute('delete from events where id = ?', [id])", 'delete from', 'events'],
    'the ORM': ['em.nativeUpdate(Transfer, { id }, { status: "failed" })', 'nativeUpdate', 'transfers'],
    'a query builder': ['em.createQueryBuilder(Event).insert({ id })', 'createQueryBuilder().insert', 'events'],
    'a schema-qualified name': ["em.execute('delete from public.transfers')", 'delete from', 'transfers'],
    'a merge': ["em.execute('merge into postings using x on true when matched then delete')", 'merge into', 'postings'],
    'a repository': ['em.getRepository(Transfer).nativeDelete({ id })', 'nativeDelete', 'transfers'],
    'qb()': ['em.qb(Event).update({ type: "x" }).execute()', 'createQueryBuilder().update', 'events'],
    'the unit of work': ['em.flush()', 'flush', '(unit of work)'],
  };
  it.each(Object.entries(plantedWrites))(
    'fails on a planted write by another module: %s',
    (_what, [line, how, table]) => {
      const writes = tableWrites('src/webhooks/service.ts', line, entities);
      expect(ownershipViolations(writes)).toEqual([{ file: 'src/webhooks/service.ts', line: 1, table, how }]);
    },
  );

  it('leaves reads, locks and upserts of the statement itself alone', () => {
    const text = [
      "await em.execute('select id from ledger_accounts where id = ? for update', [id]);",
      "await em.execute('insert into events (id) values (?) on conflict (id) do update set id = excluded.id', [id]);",
    ].join('\n');
    expect(tableWrites('src/events/events.ts', text, entities).map((write) => write.table)).toEqual(['events']);
  });
});
