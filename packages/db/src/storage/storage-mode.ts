/**
 * How time series are stored, decided once at the first migration and kept in
 * `storage_settings.mode`:
 * - `timescale`: hypertables, continuous aggregates, and jobs for refresh, compression and
 *   retention that TimescaleDB's scheduler runs;
 * - `postgres`: daily range partitions and rollup tables that the writer's maintenance keeps.
 * Both expose the same tables and views with the same columns.
 */
export type StorageMode = 'timescale' | 'postgres';

export const storageModes = ['timescale', 'postgres'] as const satisfies readonly StorageMode[];

/** How long each kind of data is kept and when samples are compressed (docs/operations.md). */
export type StoragePolicies = {
  /** Raw samples (RAW_RETENTION_DAYS). */
  rawRetentionDays: number;
  /** Container and process snapshots (SNAPSHOT_RETENTION_DAYS). */
  snapshotRetentionDays: number;
  /** Exemplars (EXEMPLAR_RETENTION_DAYS). */
  exemplarRetentionDays: number;
  /** The 1-minute rollup (ROLLUP_1M_RETENTION_DAYS). */
  rollup1mRetentionDays: number;
  /** The 1-hour rollup (ROLLUP_1H_RETENTION_DAYS). */
  rollup1hRetentionDays: number;
  /** TimescaleDB compresses sample chunks older than this (COMPRESS_AFTER_HOURS). */
  compressAfterHours: number;
  /**
   * How often TimescaleDB runs the compression, retention and refresh jobs
   * (STORAGE_JOB_INTERVAL_SECONDS); undefined: each job's own default (timescale/policies.ts).
   */
  jobIntervalSeconds: number | undefined;
};
