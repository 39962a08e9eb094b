// Which module may write which table (docs/architecture.md), and a reader of source code that
// finds every write in it: SQL in string and template literals (insert into, update, delete from,
// truncate) and the ORM's writes (insert, nativeUpdate, nativeDelete, upsert, create, and
// createQueryBuilder(Entity) chains that insert, update or delete). Reads are free; only the owner
// writes. Used by test/unit/architecture.test.ts.
import { readFileSync, readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import ts from 'typescript';

/** Table → the files that may write it (paths from the project root). */
export const TABLE_OWNERS: Readonly<Record<string, readonly string[]>> = {
  journal_entries: ['src/ledger/ledger.ts'],
  postings: ['src/ledger/ledger.ts'],
  ledger_accounts: ['src/ledger/ledger.ts'],
  events: ['src/events/events.ts'],
  event_stream_leases: ['src/event-stream/stream-leases.ts'],
  tenants: ['src/tenants/tenants.ts'],
  api_keys: ['src/tenants/tenants.ts'],
  api_key_secrets: ['src/tenants/tenants.ts'],
  audit_log: ['src/audit/log.ts'],
  console_users: ['src/console/store.ts'],
  console_invitations: ['src/console/store.ts'],
  console_sessions: ['src/console/store.ts'],
  console_sign_in_failures: ['src/console/store.ts'],
  transfer_policies: ['src/transfer-policy/store.ts'],
  idempotency_keys: ['src/http/idempotency.ts'],
  rate_limit_windows: ['src/http/rate-limit-windows.ts'],
  provider_callbacks: ['src/provider-callbacks/dispatcher.ts'],
  transfers: ['src/transfers/store.ts'],
  transfer_resolutions: ['src/transfers/store.ts'],
  abandoned_reservations: ['src/transfers/store.ts'],
  transfer_discrepancies: ['src/transfers/store.ts'],
  transfer_connector_conflicts: ['src/transfers/store.ts'],
  transfer_batches: ['src/transfers/batch-store.ts'],
  transfer_batch_items: ['src/transfers/batch-store.ts'],
  cards: ['src/cards/store.ts'],
  card_operations: ['src/cards/store.ts'],
  card_fundings: ['src/cards/store.ts'],
  card_authorizations: ['src/cards/authorizations.ts'],
  card_authorization_voids: ['src/cards/authorizations.ts'],
  virtual_accounts: ['src/virtual-accounts/store.ts'],
  inbound_credits: ['src/virtual-accounts/store.ts'],
  virtual_account_bvns: ['src/virtual-accounts/store.ts'],
  identity_customers: ['src/identity/store.ts'],
  bvn_verifications: ['src/identity/store.ts'],
  recipients: ['src/recipients/store.ts'],
  webhook_endpoints: ['src/webhooks/store.ts'],
  webhook_deliveries: ['src/webhooks/store.ts'],
  webhook_attempts: ['src/webhooks/store.ts'],
  webhook_attempt_slots: ['src/webhooks/attempt-slots.ts'],
  reconciliation_runs: ['src/reconciliation/store.ts'],
  reconciliation_items: ['src/reconciliation/store.ts'],
  admin_audit: ['src/admin/audit.ts'],
  name_enquiry_slots: ['src/connectors/name-enquiry-slots.ts'],
  name_enquiry_waiters: ['src/connectors/name-enquiry-slots.ts'],
};

/** The sandbox bank is a service of its own: its schema's tables are its store's alone. */
export const SANDBOX_BANK_SCHEMA = { schema: 'sandbox_bank', owners: ['src/sandbox-bank/store.ts'] };

/** Where the product's code lives; migrations create the tables and are nobody's writes. */
export const PRODUCT_FOLDERS = ['src', 'activities', 'workflows', 'worker', 'scripts'];
const NOT_READ = /^src\/db\/migrations\//;

export interface TableWrite {
  file: string;
  line: number;
  table: string;
  how: string;
}

/** The modules that write through MikroORM's unit of work (create, then flush): their own tables only. */
export const UNIT_OF_WORK_OWNERS: readonly string[] = ['src/tenants/tenants.ts'];

const SQL_WRITE =
  /\b(insert\s+into|merge\s+into|update|delete\s+from|truncate(?:\s+table)?)\s+(?:only\s+)?"?([a-z_][a-z0-9_]*)"?(?:\."?([a-z_][a-z0-9_]*)"?)?/gi;
const ORM_WRITES = new Set(['insert', 'insertMany', 'nativeUpdate', 'nativeDelete', 'upsert', 'upsertMany', 'create']);
const BUILDER_WRITES = new Set(['insert', 'update', 'delete', 'truncate']);
const ENTITY_ROOTS = new Set(['createQueryBuilder', 'qb', 'getRepository']);
/** What a flush writes, as a write's `table`. */
const UNIT_OF_WORK = '(unit of work)';

/** Entity constants (`tableEntity('Name', 'table', …)`, `defineEntity({ tableName })`) → their tables. */
export function entityTables(files: ReadonlyMap<string, string>): Map<string, string> {
  const tables = new Map<string, string>();
  for (const text of files.values()) {
    for (const match of text.matchAll(/const (\w+) = tableEntity\(\s*'\w+',\s*'([a-z_]+)'/g)) {
      tables.set(match[1]!, match[2]!);
    }
    for (const match of text.matchAll(/const (\w+) = defineEntity\(\{[^}]*?tableName: '([a-z_]+)'/gs)) {
      tables.set(match[1]!, match[2]!);
    }
  }
  return tables;
}

/** Every write to a table in one file's source. */
export function tableWrites(file: string, text: string, entities: ReadonlyMap<string, string>): TableWrite[] {
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const constants = new Map<string, string>();
  for (const statement of source.statements) {
    if (!ts.isVariableStatement(statement)) continue;
    for (const declaration of statement.declarationList.declarations) {
      if (ts.isIdentifier(declaration.name) && declaration.initializer && ts.isStringLiteral(declaration.initializer)) {
        constants.set(declaration.name.text, declaration.initializer.text);
      }
    }
  }
  const writes: TableWrite[] = [];
  const lineOf = (node: ts.Node) => source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;

  const sqlIn = (node: ts.Node, sql: string) => {
    for (const match of sql.matchAll(SQL_WRITE)) {
      const [, verb, first, second] = match;
      // public.x is x; another schema (the sandbox bank's) stays part of the name.
      const table = second ? (first!.toLowerCase() === 'public' ? second : `${first}.${second}`) : first!;
      writes.push({
        file,
        line: lineOf(node),
        table: table.toLowerCase(),
        how: verb!.toLowerCase().replace(/\s+/g, ' '),
      });
    }
  };
  const templateText = (node: ts.TemplateExpression) =>
    node.head.text +
    node.templateSpans
      .map((span) => {
        const name = ts.isIdentifier(span.expression) ? span.expression.text : undefined;
        return (name !== undefined ? (constants.get(name) ?? name) : '$value') + span.literal.text;
      })
      .join('');

  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node)) sqlIn(node, node.text);
    else if (ts.isTemplateExpression(node)) sqlIn(node, templateText(node));
    else if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
      const method = node.expression.name.text;
      const [first] = node.arguments;
      // em.insert(Entity, …), or a repository's or query builder's write: em.getRepository(Entity).nativeUpdate(…).
      const receiver = builderEntity(node.expression.expression, entities);
      const entity = (first && ts.isIdentifier(first) ? entities.get(first.text) : undefined) ?? receiver;
      if (receiver && BUILDER_WRITES.has(method)) {
        writes.push({ file, line: lineOf(node), table: receiver, how: `createQueryBuilder().${method}` });
      } else if (entity && ORM_WRITES.has(method))
        writes.push({ file, line: lineOf(node), table: entity, how: method });
      // The unit of work writes whatever the entity manager holds: only its owners may flush.
      if (method === 'flush' && node.arguments.length === 0) {
        writes.push({ file, line: lineOf(node), table: UNIT_OF_WORK, how: 'flush' });
      }
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return writes.filter(
    (write) =>
      write.table in TABLE_OWNERS ||
      write.table === UNIT_OF_WORK ||
      write.table.startsWith(`${SANDBOX_BANK_SCHEMA.schema}.`),
  );
}

/** The entity of a `createQueryBuilder(Entity)`, `qb(Entity)` or `getRepository(Entity)` at the root of a call chain, if any. */
function builderEntity(node: ts.Expression, entities: ReadonlyMap<string, string>): string | undefined {
  let current: ts.Expression = node;
  for (;;) {
    if (ts.isCallExpression(current)) {
      const callee = current.expression;
      if (ts.isPropertyAccessExpression(callee) && ENTITY_ROOTS.has(callee.name.text)) {
        const [first] = current.arguments;
        return first && ts.isIdentifier(first) ? entities.get(first.text) : undefined;
      }
      current = callee;
    } else if (ts.isPropertyAccessExpression(current)) current = current.expression;
    else return undefined;
  }
}

/** The writes whose file is not the table's owner. */
export function ownershipViolations(writes: readonly TableWrite[]): TableWrite[] {
  return writes.filter((write) => {
    const owners =
      write.table === UNIT_OF_WORK
        ? UNIT_OF_WORK_OWNERS
        : write.table.startsWith(`${SANDBOX_BANK_SCHEMA.schema}.`)
          ? SANDBOX_BANK_SCHEMA.owners
          : TABLE_OWNERS[write.table]!;
    return !owners.includes(write.file);
  });
}

/** The product's source files (TypeScript, and the scripts' JavaScript) and their text, by path from `root`. */
export function productSources(root: string): Map<string, string> {
  const files = new Map<string, string>();
  const walk = (dir: string) => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (/\.(ts|js|mjs|cjs)$/.test(name)) {
        const rel = relative(root, path).replaceAll('\\', '/');
        if (!NOT_READ.test(rel)) files.set(rel, readFileSync(path, 'utf8'));
      }
    }
  };
  for (const folder of PRODUCT_FOLDERS) walk(join(root, folder));
  return files;
}
