import { defineConfig } from 'vitest/config';

// Workspace packages resolve to their TypeScript sources through the `development` condition.
const resolve = { conditions: ['development'] };

export default defineConfig({
  test: {
    projects: [
      {
        resolve,
        test: {
          name: 'unit',
          include: ['packages/*/src/**/*.test.ts'],
          exclude: [
            '**/*.int.test.ts',
            '**/*.container.test.ts',
            '**/*.compliance.test.ts',
            '**/node_modules/**',
          ],
          environment: 'node',
        },
      },
      {
        resolve,
        test: {
          name: 'int',
          include: ['packages/*/src/**/*.int.test.ts'],
          environment: 'node',
          globalSetup: ['packages/testkit/src/vitest-global-setup.ts'],
          testTimeout: 120_000,
          hookTimeout: 180_000,
          // Integration files share the servers the global setup started; running them one at
          // a time keeps a 2-core machine from timing out under Kafka + PostgreSQL + the JVM.
          fileParallelism: false,
        },
      },
      {
        resolve,
        test: {
          // Suites whose wall time their authors fixed (the alert generator compliance suite:
          // about 40 minutes), against real servers like `int`: not part of `npm test`; CI runs
          // them beside it (docs/development.md#ci).
          name: 'compliance',
          include: ['packages/*/src/**/*.compliance.test.ts'],
          environment: 'node',
          globalSetup: ['packages/testkit/src/vitest-global-setup.ts'],
          testTimeout: 3_600_000,
          hookTimeout: 600_000,
        },
      },
      {
        resolve,
        test: {
          // Tests of the project's own images in a Docker engine (deploy/Dockerfile built as
          // monitor:local, see .ci/run): not part of `npm test`, which needs no engine.
          name: 'container',
          include: ['packages/*/src/**/*.container.test.ts'],
          environment: 'node',
          testTimeout: 120_000,
          hookTimeout: 180_000,
          fileParallelism: false,
        },
      },
    ],
  },
});
