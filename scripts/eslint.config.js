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
    basePath: root,
    files: ['workflows/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [
            ...builtinModules.flatMap((name) => [name, `node:${name}`]),
            '@mikro-orm/core',
            '@mikro-orm/postgresql',
            'pg',
            'fastify',
          ],
          patterns: [
            { group: ['node:*'], message: 'workflow code must not use Node built-ins' },
            { group: ['../src/**', '../activities/**', '!../activities/index.ts'], message: 'workflows import activity types only' },
          ],
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
