import type { Database } from '../core/database.js';

/** A compression job's windows, in hours, for the hypertable or aggregate it names. */
export type CompressionWindow = {
  name: string;
  chunkHours: number;
  compressAfterHours: number;
  jobHours: number;
};

/** Every compression job of the schema as the scheduler holds it, with its chunks' length. */
export async function readCompressionWindows(db: Database): Promise<CompressionWindow[]> {
  const rows = await db.sql<
    { name: string; chunk_hours: number; compress_after_hours: number; job_hours: number }[]
  >`
    -- A continuous aggregate's compression job names its view; its chunks are the
    -- materialization hypertable's (which timescaledb_information.dimensions leaves out).
    -- A hypertable's chunks are its dimension's interval long: the raw samples' compressed
    -- chunks are longer (head chunks merge into them), the chunks being written are not.
    select j.hypertable_name::text as name,
      coalesce(
        (select d.integer_interval::float8 / 3600000 from timescaledb_information.dimensions d
         where d.hypertable_schema = j.hypertable_schema and d.hypertable_name = j.hypertable_name
           and d.integer_interval is not null),
        (select coalesce(max(k.range_end_integer - k.range_start_integer)::float8 / 3600000,
         extract(epoch from max(k.range_end - k.range_start))::float8 / 3600)
       from timescaledb_information.chunks k
       where k.hypertable_schema = coalesce(c.materialization_hypertable_schema, j.hypertable_schema)
         and k.hypertable_name = coalesce(c.materialization_hypertable_name, j.hypertable_name)))
        as chunk_hours,
      -- Milliseconds where the time is epoch milliseconds, else an interval.
      case when jsonb_typeof(j.config -> 'compress_after') = 'number'
        then (j.config ->> 'compress_after')::float8 / 3600000
        else extract(epoch from (j.config ->> 'compress_after')::interval)::float8 / 3600
      end as compress_after_hours,
      extract(epoch from j.schedule_interval)::float8 / 3600 as job_hours
    from timescaledb_information.jobs j
    left join timescaledb_information.continuous_aggregates c
      on c.view_schema = j.hypertable_schema and c.view_name = j.hypertable_name
    where j.proc_name = 'policy_compression' and j.hypertable_schema = current_schema()
  `;
  return rows.map((row) => ({
    name: row.name,
    chunkHours: row.chunk_hours,
    compressAfterHours: row.compress_after_hours,
    jobHours: row.job_hours,
  }));
}

/** The raw retention stored in storage_settings, in days (30 where none is stored). */
export async function readRawRetentionDays(db: Database): Promise<number> {
  const [settings] = await db.sql<{ days: number }[]>`
    select coalesce((policies ->> 'rawRetentionDays')::int, raw_retention_days, 30) as days
    from storage_settings
  `;
  return settings?.days ?? 30;
}

/**
 * How often the raw samples' consolidation job looks (storage/timescale/head-chunks.ts), in
 * hours; undefined before migration 33.
 */
export async function readConsolidationJobHours(db: Database): Promise<number | undefined> {
  const [row] = await db.sql<{ job_hours: number }[]>`
    select extract(epoch from schedule_interval)::float8 / 3600 as job_hours
    from timescaledb_information.jobs
    where proc_schema = current_schema() and proc_name = 'consolidate_sample_chunks'`;
  return row?.job_hours;
}
