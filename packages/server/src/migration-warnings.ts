import type { MigrateResult } from '@monitor/db';
import type { Logger } from '@monitor/platform';

/**
 * What a migration found that an operator should act on, one WARN line each: its notes (why
 * TimescaleDB is not used…), and the server settings too low for TimescaleDB to start every
 * storage job, each with its value and the value it needs.
 */
export function warnOfMigration(
  logger: Logger,
  migrated: Pick<MigrateResult, 'notes' | 'jobWorkers'>,
): void {
  for (const note of migrated.notes) logger.warn({ component: 'storage' }, note);
  if (migrated.jobWorkers === undefined) return;
  const { jobs, tooLow } = migrated.jobWorkers;
  logger.warn(
    { component: 'storage', jobs, settings: tooLow },
    'TimescaleDB has too few workers to start every storage job when it is due: raise these ' +
      'settings to the values needed and restart PostgreSQL (docs/operations.md)',
  );
}
