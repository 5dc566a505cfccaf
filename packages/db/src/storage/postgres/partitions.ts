import type { Database } from '../../core/database.js';
import type { DailyPartition, PartitionedTable } from './partition-plan.js';
import { partitionedTables, planPartitions } from './partition-plan.js';

export type EnsurePartitionsOptions = {
  now: Date;
  /** Create partitions this many days beyond today (default 3). */
  daysAhead?: number;
  /** Raw samples and staleness markers kept (RAW_RETENTION_DAYS): older partitions are dropped. */
  rawRetentionDays: number;
  /** Snapshots kept (SNAPSHOT_RETENTION_DAYS). */
  snapshotRetentionDays: number;
  /** Exemplars kept (EXEMPLAR_RETENTION_DAYS). */
  exemplarRetentionDays: number;
};

export type EnsurePartitionsResult = {
  /** Partitions created, e.g. `samples_p20261122`. */
  created: string[];
  /** Partitions dropped because all their rows are past retention. */
  dropped: string[];
  /** Rows moved out of a default partition into a partition created for their day. */
  rowsMovedFromDefault: number;
  /** Rows past retention deleted from a default partition. */
  rowsPurgedFromDefault: number;
};

const defaultDaysAhead = 3;
/** Maintenance waits at most this long for a lock, then fails and retries on its next run. */
const lockTimeout = '10s';

/**
 * Plain-PostgreSQL partition maintenance for `samples`, `snapshots`, `stale_markers`,
 * `unaggregated_samples` and `exemplars` (from the migrations that create those three on): creates
 * the daily partitions from the retention cutoff to `daysAhead` days ahead, drops the expired ones,
 * and keeps the DEFAULT partition (which catches any sample outside them) small (TimescaleDB's
 * chunks and retention policy do this by themselves). Idempotent; each partition changes in a
 * transaction of its own so locks are held briefly.
 */
export async function ensurePartitions(
  db: Database,
  options: EnsurePartitionsOptions,
): Promise<EnsurePartitionsResult> {
  const result: EnsurePartitionsResult = {
    created: [],
    dropped: [],
    rowsMovedFromDefault: 0,
    rowsPurgedFromDefault: 0,
  };

  const retentionDays: Record<PartitionedTable, number> = {
    samples: options.rawRetentionDays,
    snapshots: options.snapshotRetentionDays,
    stale_markers: options.rawRetentionDays,
    unaggregated_samples: options.rawRetentionDays,
    exemplars: options.exemplarRetentionDays,
    histogram_chunks: options.rawRetentionDays,
  };
  for (const table of partitionedTables) {
    const [exists] = await db.sql<{ exists: boolean }[]>`
      select to_regclass(${table}) is not null as exists
    `;
    // A database migrated to a version before the table's (tests of older migrations).
    if (exists?.exists !== true) continue;
    const existing = await db.sql<{ name: string }[]>`
      select c.relname as name
      from pg_inherits i join pg_class c on c.oid = i.inhrelid
      where i.inhparent = ${table}::regclass
    `;
    const plan = planPartitions({
      table,
      now: options.now,
      daysAhead: options.daysAhead ?? defaultDaysAhead,
      retentionDays: retentionDays[table],
      existing: existing.map((row) => row.name),
    });
    for (const partition of plan.create) {
      result.rowsMovedFromDefault += await createPartition(db, table, partition);
      result.created.push(partition.name);
    }
    for (const name of plan.drop) {
      await db.sql.begin(async (sql) => {
        await sql.unsafe(`set local lock_timeout = '${lockTimeout}'`);
        await sql.unsafe(`drop table if exists ${name}`);
      });
      result.dropped.push(name);
    }
    const purged = await db.sql`
      delete from ${db.sql(`${table}_default`)} where time < ${plan.cutoff}
    `;
    result.rowsPurgedFromDefault += purged.count;
  }
  return result;
}

/**
 * Creates one daily partition and moves into it the rows the DEFAULT partition holds for its
 * day (attaching a range that the default partition still has rows for would fail). Locking
 * the default partition first keeps new rows for that day from slipping in meanwhile; inserts
 * into every other partition go on.
 */
async function createPartition(
  db: Database,
  table: PartitionedTable,
  partition: DailyPartition,
): Promise<number> {
  const defaultPartition = `${table}_default`;
  const from = partition.from.toISOString();
  const to = partition.to.toISOString();
  return await db.sql.begin(async (sql) => {
    await sql.unsafe(`set local lock_timeout = '${lockTimeout}'`);
    await sql.unsafe(`lock table ${defaultPartition} in share row exclusive mode`);
    const [row] = await sql<{ exists: boolean }[]>`
      select to_regclass(${partition.name}) is not null as exists
    `;
    if (row?.exists) return 0; // created meanwhile by another maintenance run
    await sql.unsafe(`create table ${partition.name} (like ${table} including defaults)`);
    // Histogram chunks compress in rows past 128 bytes (a partitioned table holds no such
    // storage parameter for its partitions to inherit).
    if (table === 'histogram_chunks') {
      await sql.unsafe(`alter table ${partition.name} set (toast_tuple_target = 128)`);
    }
    const moved = await sql.unsafe(
      `with moved as (
         delete from ${defaultPartition} where time >= $1 and time < $2 returning *
       )
       insert into ${partition.name} select * from moved`,
      [from, to],
    );
    // Attaching takes only a SHARE UPDATE EXCLUSIVE lock on the parent: writers go on.
    await sql.unsafe(
      `alter table ${table} attach partition ${partition.name}
       for values from ('${from}') to ('${to}')`,
    );
    return moved.count;
  });
}
