/**
 * ESLint over every workspace's TypeScript (src and test, the console's UI included), with
 * typescript-eslint's type-aware recommended rules; run by `npm run lint`, which `npm test`'s
 * pretest runs (so CI does). Each tsconfig.json next to a file gives it its types (projectService).
 */
import js from '@eslint/js';
import { defineConfig, globalIgnores } from 'eslint/config';
import tseslint from 'typescript-eslint';

export default defineConfig(
  globalIgnores([
    '**/dist/',
    // Written by json-schema-to-typescript (schemas/scripts/generate-types.mjs), checked by `npm run check`.
    'schemas/src/generated/',
    // The plain JavaScript (bins, build and bench scripts) is out of this linter's scope: TypeScript only.
    '**/*.js',
    '**/*.mjs',
    '**/*.cjs',
  ]),
  {
    files: ['**/*.ts', '**/*.tsx'],
    extends: [js.configs.recommended, tseslint.configs.recommendedTypeChecked],
    languageOptions: {
      parserOptions: { projectService: true, tsconfigRootDir: import.meta.dirname },
    },
    rules: {
      // tap queues subtests and waits for each before its parent ends: t.test's promise is not lost.
      '@typescript-eslint/no-floating-promises': [
        'error',
        {
          allowForKnownSafeCalls: [{ from: 'package', package: '@tapjs/test', name: ['test', 'skip', 'todo', 'only'] }],
        },
      ],
      // Port implementations are async without awaiting so that a throw becomes a rejection, as the port promises.
      '@typescript-eslint/require-await': 'off',
      // Leaving a field out of a copy by destructuring (`const { _files: _, ...rest } = body`) is this codebase's idiom.
      '@typescript-eslint/no-unused-vars': ['error', { ignoreRestSiblings: true }],
      // A caught error or an AbortSignal's reason is passed on as it is (unknown), not wrapped.
      '@typescript-eslint/prefer-promise-reject-errors': ['error', { allowThrowingUnknown: true }],
      // A test's teardown, registered before the process it stops is started, reads the variable first.
      'prefer-const': ['error', { ignoreReadBeforeAssign: true }],
      // Inputs are checked for control characters on purpose (tenant ids, header values, admin keys).
      'no-control-regex': 'off',
    },
  },
  {
    // The kernel imports no plugin, driver or adapter (docs/architecture.md): they get what they need
    // through its ports and hooks, and the application (server/) puts them together.
    files: ['core/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: ['@opco-proxy/*', '!@opco-proxy/schemas', '!@opco-proxy/schemas/*'],
              message: 'core imports no plugin, driver or adapter: give it what it needs through a port or a hook.',
            },
          ],
        },
      ],
    },
  },
  {
    // A plugin, a driver or an adapter knows the kernel's curated surface (core/src/index.ts and
    // its kits, versioned with PLUGIN_API_VERSION) and the schemas, never another plugin or
    // driver, nor `@opco-proxy/core/application` (everything, unversioned).
    files: ['plugins/*/src/**/*.ts', 'drivers/*/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '@opco-proxy/*',
                '@opco-proxy/*/**',
                '!@opco-proxy/core',
                '!@opco-proxy/core/durable',
                '!@opco-proxy/core/limits',
                '!@opco-proxy/core/driver-kit',
                '!@opco-proxy/schemas',
                '!@opco-proxy/schemas/*',
              ],
              message:
                'a plugin, driver or adapter imports only @opco-proxy/core, its kits (/durable, /limits, /driver-kit) and @opco-proxy/schemas.',
            },
          ],
        },
      ],
    },
  },
  {
    // An adapter is a profile: the main export is all it needs (an adapter may build on another's profile).
    files: ['adapters/*/src/**/*.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          patterns: [
            {
              group: [
                '@opco-proxy/*',
                '@opco-proxy/*/**',
                '!@opco-proxy/core',
                '!@opco-proxy/schemas',
                '!@opco-proxy/schemas/*',
                '!@opco-proxy/adapter-*',
              ],
              message:
                "an adapter imports only @opco-proxy/core's main export, @opco-proxy/schemas and other adapters.",
            },
          ],
        },
      ],
    },
  },
  {
    // Tests (and e2e's harness) read JSON answers as `any` and check them with tap's assertions, which is the check.
    files: ['**/test/**', 'e2e/**'],
    rules: {
      '@typescript-eslint/no-explicit-any': 'off',
      '@typescript-eslint/no-unsafe-member-access': 'off',
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-argument': 'off',
      '@typescript-eslint/no-unsafe-call': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
);
