// The architecture check's import rules (`npm run arch`, part of `npm test`); docs/architecture.md
// states them for readers. Which module may write which table is checked on the SQL and ORM calls
// themselves, by test/unit/architecture.test.ts.
/** @type {import('dependency-cruiser').IConfiguration} */
module.exports = {
  forbidden: [
    {
      name: 'workflows-import-types-only',
      comment:
        'Workflow code is bundled and replayed: it imports activity and shared types only (import type), ' +
        'values only from pure domain modules (src/<feature>/domain.ts, src/lib/).',
      severity: 'error',
      from: { path: '^workflows/' },
      to: {
        path: '^(src|activities|worker)/',
        pathNot: '^src/(lib/|[^/]+/domain\\.ts$)',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'workflows-deterministic',
      comment: 'No Node built-ins and no server-side packages in workflow code (or the domain modules it runs).',
      severity: 'error',
      from: { path: '^(workflows/|src/lib/|src/[^/]+/domain\\.ts$)' },
      to: {
        dependencyTypes: ['core', 'npm', 'npm-dev', 'npm-optional', 'npm-peer', 'npm-no-pkg', 'npm-unknown'],
        dependencyTypesNot: ['type-only'],
        pathNot:
          '^node_modules/(@temporalio/(workflow|common|interceptors-opentelemetry)|@opentelemetry/api|@noble/hashes)/',
      },
    },
    {
      name: 'domain-is-pure',
      comment: 'Domain modules and src/lib/ import nothing of the project but each other (types aside).',
      severity: 'error',
      from: { path: '^(src/lib/|src/[^/]+/domain\\.ts$)' },
      to: {
        path: '^(src|activities|workflows|worker)/',
        pathNot: '^src/(lib/|[^/]+/domain\\.ts$)',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'feature-store-is-private',
      comment:
        "A feature's store is imported only inside its feature (its folder and its activities); " +
        'other features call its service. src/db/entities.ts lists every entity for the ORM.',
      severity: 'error',
      from: { path: '^src/([^/]+)/', pathNot: '^src/db/entities\\.ts$' },
      to: { path: '^src/[^/]+/store\\.ts$', pathNot: '^src/$1/' },
    },
    {
      name: 'activities-use-their-own-feature-store',
      severity: 'error',
      from: { path: '^activities/([^/.]+)\\.ts$' },
      to: { path: '^src/[^/]+/store\\.ts$', pathNot: '^src/$1/' },
    },
    {
      name: 'only-the-worker-runs-activities',
      comment: 'Activities run in the worker; the API reaches them only through workflows.',
      severity: 'error',
      from: { path: '^src/' },
      to: { path: '^(activities|worker)/', dependencyTypesNot: ['type-only'] },
    },
    {
      name: 'no-workflow-implementation-outside-workflows',
      comment: 'The API and activities use a workflow through its *-definitions.ts handles, never its code.',
      severity: 'error',
      from: { path: '^(src|activities)/' },
      to: {
        path: '^workflows/',
        pathNot: '-definitions\\.ts$|search-attributes\\.ts$',
        dependencyTypesNot: ['type-only'],
      },
    },
    {
      name: 'sandbox-bank-stands-alone',
      comment:
        'The sandbox bank is a service of its own: it shares nothing with the API but the generic bank contract ' +
        '(src/connectors/generic/contract.ts) and the process-neutral src/runtime/.',
      severity: 'error',
      from: { path: '^src/sandbox-bank/' },
      to: {
        path: '^(src|activities|workflows|worker)/',
        pathNot: '^src/(sandbox-bank/|runtime/|connectors/generic/contract\\.ts$)',
      },
    },
    {
      name: 'runtime-and-contract-stand-alone',
      comment:
        'src/runtime/ and the generic bank contract import nothing of the gateway, so every process may use them.',
      severity: 'error',
      from: { path: '^src/(runtime/|connectors/generic/contract\\.ts$)' },
      to: { path: '^(src|activities|workflows|worker)/', pathNot: '^src/runtime/' },
    },
    {
      name: 'no-process-reaches-the-sandbox-bank',
      comment: 'Only the launcher (src/stack/) knows the sandbox bank, to check its configuration and start it.',
      severity: 'error',
      from: { path: '^(src|activities|workflows|worker)/', pathNot: '^src/(sandbox-bank|stack)/' },
      to: { path: '^src/sandbox-bank/' },
    },
    {
      name: 'no-test-code-in-the-product',
      severity: 'error',
      from: { path: '^(src|activities|workflows|worker)/' },
      to: { path: '^test/' },
    },
  ],
  options: {
    doNotFollow: { path: 'node_modules' },
    tsPreCompilationDeps: true,
    tsConfig: { fileName: 'tsconfig.json' },
    enhancedResolveOptions: { exportsFields: ['exports'], conditionNames: ['import', 'require', 'node', 'default'] },
    reporterOptions: { text: { highlightFocused: true } },
  },
};
