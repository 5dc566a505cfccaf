import { describe, expect, it } from 'vitest';
import { jobWorkerShortfall } from './job-workers.js';

/**
 * PostgreSQL 15's stock settings with TimescaleDB's default, and the 14 jobs of a migrated
 * database: our 12, TimescaleDB's telemetry and its job history retention.
 */
const stock = {
  jobs: 14,
  maxWorkerProcesses: 8,
  maxBackgroundWorkers: 16,
  maxParallelWorkers: 8,
  maxLogicalReplicationWorkers: 4,
};

describe('jobWorkerShortfall', () => {
  it('names max_worker_processes on a stock server: launchers, scheduler, jobs and parallel workers', () => {
    expect(jobWorkerShortfall(stock)).toEqual([
      { setting: 'max_worker_processes', value: 8, needed: 25 },
    ]);
  });

  it('asks nothing more of the settings the servers we start have (26 and 18)', () => {
    expect(
      jobWorkerShortfall({ ...stock, maxWorkerProcesses: 26, maxBackgroundWorkers: 18 }),
    ).toEqual([]);
  });

  it('names timescaledb.max_background_workers when it cannot hold the launcher, the scheduler and every job', () => {
    expect(
      jobWorkerShortfall({ ...stock, maxWorkerProcesses: 26, maxBackgroundWorkers: 8 }),
    ).toEqual([{ setting: 'timescaledb.max_background_workers', value: 8, needed: 16 }]);
  });

  it('counts parallel workers and the logical replication launcher only where they can run', () => {
    expect(
      jobWorkerShortfall({ ...stock, maxParallelWorkers: 0, maxLogicalReplicationWorkers: 0 }),
    ).toEqual([{ setting: 'max_worker_processes', value: 8, needed: 16 }]);
  });
});
