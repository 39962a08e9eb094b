// ESLint flat config (run as `npm run lint`). Type-aware rules for all TypeScript; workflow code
// additionally may not import Node built-ins or server-side libraries (it must stay deterministic).
import { builtinModules } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import js from '@eslint/js';
import globals from 'globals';
import tseslint from 'typescript-eslint';

const root = join(dirname(fileURLToPath(import.meta.url)), '..');

export default tseslint.config(
  { ignores: ['node_modules/**', '.data/**', '.tools/**', 'coverage/**', 'test/fixtures/**'] },
  {
    basePath: root,
    files: ['**/*.ts'],
    extends: [js.configs.recommended, ...tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: root },
      globals: globals.node,
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': ['error', { checksVoidReturn: { arguments: false } }],
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_', varsIgnorePattern: '^_' }],
      '@typescript-eslint/consistent-type-imports': ['error', { fixStyle: 'inline-type-imports' }],
      'no-console': 'off',
    },
  },
  {
    // Tests read JSON responses, which are `any` by nature; their assertions do the checking.
    basePath: root,
    files: ['test/**/*.ts'],
    rules: {
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/require-await': 'off',
    },
  },
  {
    basePath: root,
    files: ['workflows/**/*.ts'],
    rules: {
      '@typescript-eslint/no-restricted-imports': [
        'error',
        {
          paths: [
            ...builtinModules.flatMap((name) => [name, `node:${name}`]),
            '@mikro-orm/core',
            '@mikro-orm/postgresql',
            'pg',
            'fastify',
          ].map((name) => ({
            name,
            message: 'workflow code must stay deterministic: no Node built-ins, ORM or network',
          })),
          patterns: [
            { group: ['node:*'], message: 'workflow code must not use Node built-ins' },
            {
              // Pure domain modules (no I/O, no Node built-ins) are the one exception: the workflow
              // decides with the same rules as the API and the activities.
              group: ['../src/**/*.ts', '!../src/*/domain.ts', '../activities/**'],
              message: 'workflows import activity and shared types only (import type), and pure domain modules',
              allowTypeImports: true,
            },
          ],
        },
      ],
    },
  },
  {
    // A transfer step fails for good only through the domain's typed constructor
    // (src/transfers/domain.ts transferFailure), so every failure type is one the domain knows.
    basePath: root,
    files: ['activities/transfers.ts', 'workflows/transfer.ts'],
    rules: {
      'no-restricted-syntax': [
        'error',
        {
          selector:
            "MemberExpression[object.name='ApplicationFailure'][property.name=/^(create|nonRetryable|retryable|fromError)$/]",
          message: 'raise transfer failures with transferFailure() from src/transfers/domain.ts',
        },
      ],
    },
  },
  {
    basePath: root,
    files: ['**/*.mjs', '**/*.js'],
    extends: [js.configs.recommended],
    languageOptions: { globals: globals.node },
  },
);
