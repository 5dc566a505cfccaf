import type { Database } from '../../core/database.js';

/** A server setting too low for TimescaleDB to start every storage job when it is due. */
export type WorkerSettingShortfall = { setting: string; value: number; needed: number };

/** The server's worker settings, and the jobs scheduled in this database. */
export type JobWorkerSettings = {
  /** Jobs TimescaleDB schedules in this database: ours (10 at most) and its own. */
  jobs: number;
  maxWorkerProcesses: number;
  maxBackgroundWorkers: number;
  maxParallelWorkers: number;
  maxLogicalReplicationWorkers: number;
};

/**
 * The settings that leave a due job without a worker, with the value each needs (empty when
 * none does). Our compression and retention jobs are all due as soon as they are made and then
 * every hour, so they may run at once. `timescaledb.max_background_workers` counts TimescaleDB's
 * launcher, this database's scheduler and one worker per running job; `max_worker_processes`
 * counts those, PostgreSQL's logical replication launcher (while logical replication workers
 * are allowed) and parallel query workers (up to `max_parallel_workers`), which take slots from
 * the same pool: a job that finds no slot "failed to start" and waits for its next run.
 * Another database using TimescaleDB on the server needs a scheduler and workers of its own.
 */
export function jobWorkerShortfall(settings: JobWorkerSettings): WorkerSettingShortfall[] {
  const timescaleWorkers = 1 + 1 + settings.jobs;
  const workerProcesses =
    timescaleWorkers +
    (settings.maxLogicalReplicationWorkers > 0 ? 1 : 0) +
    settings.maxParallelWorkers;
  const shortfall: WorkerSettingShortfall[] = [];
  if (settings.maxWorkerProcesses < workerProcesses) {
    shortfall.push({
      setting: 'max_worker_processes',
      value: settings.maxWorkerProcesses,
      needed: workerProcesses,
    });
  }
  if (settings.maxBackgroundWorkers < timescaleWorkers) {
    shortfall.push({
      setting: 'timescaledb.max_background_workers',
      value: settings.maxBackgroundWorkers,
      needed: timescaleWorkers,
    });
  }
  return shortfall;
}

/** Reads the worker settings and this database's scheduled jobs (TimescaleDB created in it). */
export async function readJobWorkerSettings(db: Database): Promise<JobWorkerSettings> {
  const [row] = await db.sql<JobWorkerSettings[]>`
    select
      (select count(*) from timescaledb_information.jobs where scheduled)::int as jobs,
      current_setting('max_worker_processes')::int as "maxWorkerProcesses",
      current_setting('timescaledb.max_background_workers')::int as "maxBackgroundWorkers",
      current_setting('max_parallel_workers')::int as "maxParallelWorkers",
      current_setting('max_logical_replication_workers')::int as "maxLogicalReplicationWorkers"
  `;
  if (row === undefined) throw new Error('the server answered no row');
  return row;
}
