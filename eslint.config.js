// @ts-check
import js from '@eslint/js';
import tseslint from 'typescript-eslint';

/**
 * kafkajs only in bus/; the PostgreSQL driver (@monitor/postgres-driver) only in db/. Upstream
 * postgres.js only in testkit, which launches and probes the real servers with it.
 */
const kafkaOnlyInBus = { name: 'kafkajs', message: 'Only packages/bus may import kafkajs.' };
const driverOnlyInDb = {
  name: '@monitor/postgres-driver',
  message: 'Only packages/db may import the PostgreSQL driver.',
};
const upstreamPostgresOnlyInTestkit = {
  name: 'postgres',
  message:
    'Only packages/testkit may import upstream postgres.js; db uses @monitor/postgres-driver.',
};
const driversInPlace = [driverOnlyInDb, upstreamPostgresOnlyInTestkit];
const restrictImports = (...paths) => ({ 'no-restricted-imports': ['error', { paths }] });
/**
 * The lowest floor: pure engines that import no package of ours (the database reads through
 * their ports, rules build on them).
 */
const lowestFloor = ['promql', 'go-template'];
/**
 * The one test of the lowest floor that reads through both of its libraries: promql's and
 * go-template's readings of Go string literals cannot share code, so it keeps them alike.
 */
const goLiteralsCrossCheck = 'packages/promql/src/promql-literals.test.ts';
const noWorkspaceImports = {
  group: ['@monitor/*'],
  message: 'A library on the lowest floor imports no package of ours.',
};
/** A role never imports another role: what two roles share lives in a library; server composes. */
const roles = ['gateway', 'writer', 'evaluator', 'api', 'notifier', 'investigator'];
const otherRoles = (self) =>
  roles
    .filter((role) => role !== self)
    .map((role) => ({
      name: `@monitor/${role}`,
      message: 'A role never imports another role: share through a library (server composes).',
    }));

export default tseslint.config(
  // The driver is postgres.js's own source, kept in its upstream style (CHANGES.md says why).
  {
    ignores: [
      '**/dist/**',
      '**/node_modules/**',
      '**/.turbo/**',
      'data/**',
      'packages/postgres-driver/**',
    ],
  },
  js.configs.recommended,
  ...tseslint.configs.recommendedTypeChecked,
  {
    languageOptions: {
      parserOptions: {
        projectService: true,
        tsconfigRootDir: import.meta.dirname,
      },
    },
    rules: {
      '@typescript-eslint/no-floating-promises': 'error',
      '@typescript-eslint/no-misused-promises': 'error',
      '@typescript-eslint/consistent-type-imports': 'error',
      '@typescript-eslint/no-unused-vars': ['error', { argsIgnorePattern: '^_' }],
      'no-restricted-syntax': [
        'error',
        { selector: 'ExportAllDeclaration', message: 'List named exports one by one.' },
        { selector: 'ExportDefaultDeclaration', message: 'No default exports.' },
      ],
    },
  },
  {
    files: ['packages/**/*.ts'],
    ignores: ['packages/bus/**', 'packages/db/**', 'packages/testkit/**'],
    rules: restrictImports(kafkaOnlyInBus, ...driversInPlace),
  },
  ...roles.map((role) => ({
    files: [`packages/${role}/**/*.ts`],
    rules: restrictImports(kafkaOnlyInBus, ...driversInPlace, ...otherRoles(role)),
  })),
  {
    files: lowestFloor.map((library) => `packages/${library}/**/*.ts`),
    ignores: [goLiteralsCrossCheck],
    rules: {
      'no-restricted-imports': [
        'error',
        { paths: [kafkaOnlyInBus, ...driversInPlace], patterns: [noWorkspaceImports] },
      ],
    },
  },
  { files: [goLiteralsCrossCheck], rules: restrictImports(kafkaOnlyInBus, ...driversInPlace) },
  { files: ['packages/bus/**/*.ts'], rules: restrictImports(...driversInPlace) },
  {
    files: ['packages/db/**/*.ts'],
    rules: restrictImports(kafkaOnlyInBus, upstreamPostgresOnlyInTestkit),
  },
  // db's storage/ (DDL, engines, the stored value encoding) is the floor under samples/,
  // series/ and maintenance/: its code imports no db folder but core/, so what the write path
  // and storage share lives here. Tests may still seed storage through the sample store.
  ...[
    { files: ['packages/db/src/storage/*.ts'], regex: '^\\.\\./(?!core/)' },
    { files: ['packages/db/src/storage/*/**/*.ts'], regex: '^\\.\\./\\.\\./(?!core/)' },
  ].map(({ files, regex }) => ({
    files,
    ignores: ['**/*.test.ts'],
    rules: {
      'no-restricted-imports': [
        'error',
        {
          paths: [kafkaOnlyInBus, upstreamPostgresOnlyInTestkit],
          patterns: [
            { regex, message: 'db/src/storage imports only core/: move what is shared down here.' },
          ],
        },
      ],
    },
  })),
  { files: ['packages/testkit/**/*.ts'], rules: restrictImports(driverOnlyInDb) },
  {
    // Test code: the test files, and the helpers and suites they share (src/testing/).
    files: ['**/*.test.ts', 'packages/*/src/testing/**/*.ts'],
    rules: {
      '@typescript-eslint/no-non-null-assertion': 'off',
      '@typescript-eslint/unbound-method': 'off',
      // vitest's asymmetric matchers (expect.any, expect.stringMatching…) are typed `any`.
      '@typescript-eslint/no-unsafe-assignment': 'off',
      '@typescript-eslint/no-unsafe-return': 'off',
    },
  },
  {
    files: ['eslint.config.js', 'vitest.config.ts'],
    ...tseslint.configs.disableTypeChecked,
    rules: { 'no-restricted-syntax': 'off' },
  },
);
