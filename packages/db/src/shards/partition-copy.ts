import type { Database, Queryable, Sql, TransactionSql } from '../core/database.js';
import { copyIn } from '../samples/copy-in.js';
import { keptTiers } from '../storage/kept-tiers.js';

const hourMs = 3_600_000;

/**
 * Moving a partition's services with everything stored of them from one sample shard to another
 * (issue 59, `monitor shards move`). The caller stops the partition's writes first (its writer
 * and evaluator wait at the move's marker record); these functions only move rows.
 */

/** Tables of a series' data, each keyed by `series_id` (ids differ between shards). */
const seriesTables = [
  'samples',
  'stale_markers',
  'unaggregated_samples',
  'histogram_samples',
  'histogram_chunks',
  'exemplars',
] as const;

/** Where the copied partition's writer offsets start on the target. */
type CopiedOffsets = {
  groupId: string;
  topic: string;
  partition: number;
  /** The offset of the move's marker record: the first record the target stores. */
  nextOffset: number;
};

export type PartitionCopied = {
  services: number;
  series: number;
  /** Rows copied per table. */
  rows: Record<string, number>;
};

/**
 * The services of `source` not kept as control copies, with their organizations and names:
 * the caller picks a partition's by the bus's key.
 */
export async function listShardServices(
  source: Database,
): Promise<{ id: string; orgId: string; name: string }[]> {
  const rows = await source.sql<{ id: string; org_id: string; name: string }[]>`
    select id, org_id, name from services where not shard_copy`;
  return rows.map((row) => ({ id: row.id, orgId: row.org_id, name: row.name }));
}

/**
 * Where a first copy (`history`) stopped, for the catch-up: the source's snapshot it read and
 * the sample time from which the catch-up copies everything again.
 */
export type CopyCut = {
  /** `pg_current_snapshot()` of the history's read: a late write after it is not in the copy. */
  snapshot: string;
  /** The source's clock at the history's read (epoch ms). */
  readAtMs: number;
  /** Rows at or after this time (epoch ms) are copied again by the catch-up. */
  cutMs: number;
};

/**
 * The two copies of a move. `history` runs while the partition is still being stored on the
 * source: everything of the services. `catch-up` runs once the partition's consumers stopped at
 * the move's marker: what may have changed since the history's read (`since`) and the
 * partition's writer offsets. It copies again the samples, stale markers, unaggregated samples
 * and snapshots from `since.cutMs` on, and those of the hours a late write reached since (the
 * writers record them in `late_sample_writes`: a write older than PROMQL_CACHE_SETTLED_MS / 2,
 * which `recentMs` must exceed), the histograms and exemplars (which compaction moves, or which
 * carry times of their own) whole, and the services and series.
 */
export type CopyPhase =
  | { phase: 'history'; recentMs: number }
  | { phase: 'catch-up'; since: CopyCut; offsets: CopiedOffsets };

/** The tables copied again from the cut on (by their column `time`). */
const timedTables = ['samples', 'stale_markers', 'unaggregated_samples', 'snapshots'];

/** A late write this much older than the catch-up's read is pruned from `late_sample_writes`. */
const lateWritesKeptMs = 20 * 3_600_000;

/**
 * Copies `serviceIds` with their series, samples, stale markers, histograms, exemplars,
 * snapshots and tier rows from `source` to `target`, in one transaction on the target (read in
 * one snapshot of the source), in the phase `copy` says. The services arrive hidden
 * (`shard_copy`) until `showMovedServices`; what the target held of what is copied (an earlier
 * attempt) is replaced. Series get the target's ids. A tier's rows are copied by the history,
 * up to where the target has stored that tier (the target stores the later buckets from the
 * copied samples); a source whose tier is behind the target's is refused, since the buckets
 * between would be stored nowhere.
 */
export async function copyShardServices(
  source: Database,
  target: Database,
  serviceIds: readonly string[],
  copy: CopyPhase,
): Promise<PartitionCopied & { cut: CopyCut }> {
  const reading = await source.sql.reserve();
  let inTransaction = false;
  try {
    await reading.unsafe('begin isolation level repeatable read');
    inTransaction = true;
    const [read] = await reading<{ snapshot: string; now_ms: string }[]>`
      select pg_current_snapshot()::text as snapshot,
        (extract(epoch from now()) * 1000)::bigint::text as now_ms`;
    const readAtMs = Number(read?.now_ms);
    const cut: CopyCut =
      copy.phase === 'history'
        ? { snapshot: read?.snapshot ?? '', readAtMs, cutMs: readAtMs - copy.recentMs }
        : copy.since;
    if (copy.phase === 'catch-up' && readAtMs - cut.readAtMs > lateWritesKeptMs) {
      throw new Error(
        'the copy of the history is too old to catch up with (late writes are kept a day): ' +
          'move the partition again',
      );
    }
    await reading`create temp table moving_services (id text primary key) on commit drop`;
    await reading`insert into moving_services select unnest(${[...serviceIds]}::text[])`;
    const sourceFills = await readFills(reading);
    // The hours late writes reached since the history's read, each a range the catch-up copies.
    const lateHours =
      copy.phase === 'history'
        ? []
        : (
            await reading<{ hour_ms: string }[]>`
              select distinct l.hour_ms::text as hour_ms from late_sample_writes l
              where l.org_id in (select org_id from services where id = any(${[...serviceIds]}))
                and not pg_visible_in_snapshot(l.written_xid, ${cut.snapshot}::pg_snapshot)
                and l.hour_ms < ${cut.cutMs}`
          ).map((row) => Number(row.hour_ms));
    // Epoch milliseconds (TimescaleDB's samples) or timestamptz.
    const timeTypes = new Map(
      (
        await reading<{ table_name: string; data_type: string }[]>`
          select table_name, data_type from information_schema.columns
          where table_schema = current_schema() and column_name = 'time'
            and table_name = any(${timedTables})`
      ).map((row) => [row.table_name, row.data_type]),
    );
    /** The rows of `table` the phase copies (a condition on `x`), undefined for none. */
    const selected = (table: string): string | undefined => {
      if (copy.phase === 'history') return 'true';
      if (table.startsWith('sample_tier_')) return undefined;
      if (!timedTables.includes(table)) return 'true'; // histograms and exemplars: whole
      const at = (ms: number): string =>
        timeTypes.get(table) === 'bigint'
          ? `${Math.trunc(ms)}`
          : `'${new Date(ms).toISOString()}'::timestamptz`;
      return [
        `x.time >= ${at(cut.cutMs)}`,
        ...lateHours.map((hour) => `(x.time >= ${at(hour)} and x.time < ${at(hour + hourMs)})`),
      ].join(' or ');
    };
    const copied = await target.sql.begin(async (tx) => {
      const rows: Record<string, number> = {};
      // Compressed rows may be deleted below (see `deleteServicesData`).
      await tx`set local timescaledb.max_tuples_decompressed_per_dml_transaction = 0`;
      if (copy.phase === 'history') await deleteServicesData(tx, serviceIds);
      const stream = async (select: string, into: string): Promise<number> => {
        await copyIn(tx.unsafe(`copy ${into} from stdin (format binary)`), {
          [Symbol.asyncIterator]: async function* () {
            yield* await reading.unsafe(`copy (${select}) to stdout (format binary)`).readable();
          },
        });
        const [counted] = await tx.unsafe<{ n: string }[]>(`select count(*) as n from ${into}`);
        return Number(counted?.n ?? 0);
      };

      const serviceColumns =
        'id, org_id, name, tags, metrics, metric_times, last_seen, created_at, series_generation';
      await tx.unsafe(`create temp table stage_services on commit drop as
        select ${serviceColumns} from services with no data`);
      const services = await stream(
        `select ${serviceColumns.replace(/\b(\w+)\b/g, 's.$1')}
         from services s join moving_services m on m.id = s.id`,
        'stage_services',
      );
      // Hidden until shown; a control database's copy of one (same id) becomes it. A new
      // series generation either way: a writer that held the partition here before (it moved
      // away and back) must not take its cached series ids, deleted since, for these.
      await tx.unsafe(`
        insert into services as s (${serviceColumns}, shard_copy)
        select ${serviceColumns.replace('series_generation', 'series_generation + 1')}, true
        from stage_services
        on conflict (id) do update set tags = excluded.tags, metrics = excluded.metrics,
          metric_times = excluded.metric_times,
          last_seen = greatest(s.last_seen, excluded.last_seen),
          series_generation = s.series_generation + 1, shard_copy = true`);

      await tx`create temp table stage_series (
        old_id bigint, service_id text, metric text, labels jsonb) on commit drop`;
      const series = await stream(
        `select r.id, r.service_id, r.metric, r.labels
         from series r join moving_services m on m.id = r.service_id`,
        'stage_series',
      );
      await tx`
        insert into series (service_id, metric, labels)
        select service_id, metric, labels from stage_series order by old_id
        on conflict do nothing`;
      await tx`
        create temp table series_map on commit drop as
        select g.old_id, r.id as new_id from stage_series g
        join series r on r.service_id = g.service_id and r.metric = g.metric
          and coalesce(md5(r.labels::text), '') = coalesce(md5(g.labels::text), '')`;
      await tx`create index on series_map (old_id)`;
      const targetSeries = (
        await tx<{ id: string }[]>`select new_id::text as id from series_map`
      ).map((row) => row.id);

      const targetFills = await readFills(tx);
      /** Replaces the target's selected rows of `table` with the source's. */
      const copyTable = async (table: string, where: string): Promise<void> => {
        const columns = await columnsOf(tx, table);
        const bySeries = columns.includes('series_id');
        if (copy.phase === 'catch-up') {
          await tx.unsafe(
            bySeries
              ? `delete from ${table} x where x.series_id = any($1::bigint[]) and (${where})`
              : `delete from ${table} x where x.service_id = any($1::text[]) and (${where})`,
            [bySeries ? targetSeries : [...serviceIds]],
          );
        }
        await tx.unsafe(`create temp table stage_${table} (like ${table}) on commit drop`);
        rows[table] = await stream(
          bySeries
            ? `select x.* from ${table} x join series r on r.id = x.series_id
               join moving_services m on m.id = r.service_id where ${where}`
            : `select x.* from ${table} x join moving_services m on m.id = x.service_id
               where ${where}`,
          `stage_${table}`,
        );
        // In time order: TimescaleDB keeps 1,024 chunks open for an insert, and a week of
        // history copied series by series into 5-minute head chunks (head-chunks.ts) took 25
        // times as long, opening and closing them row by row.
        const timeColumn = columns.find((c) => c === 'time' || c === 'bucket_ms');
        const order = timeColumn === undefined ? '' : `order by x.${timeColumn}`;
        await tx.unsafe(
          bySeries
            ? `insert into ${table} (${columns.join(', ')})
               select ${columns.map((c) => (c === 'series_id' ? 'm.new_id' : `x.${c}`)).join(', ')}
               from stage_${table} x join series_map m on m.old_id = x.series_id ${order}`
            : `insert into ${table} select * from stage_${table} x ${order}`,
        );
      };
      for (const table of [...seriesTables, 'snapshots']) {
        const where = selected(table);
        if (where !== undefined) await copyTable(table, where);
      }
      for (const tier of copy.phase === 'history' ? keptTiers : []) {
        const from = sourceFills.get(tier.name);
        if (from === undefined) continue; // nothing of the tier stored on the source
        const into = targetFills.get(tier.name);
        if (into !== undefined && from.toMs < into.toMs) {
          throw new Error(
            `the source's ${tier.name} tier is stored up to ${new Date(from.toMs).toISOString()}, ` +
              `the target's up to ${new Date(into.toMs).toISOString()}: try again once the ` +
              "source's storage maintenance caught up (a minute)",
          );
        }
        const cutMs = into?.toMs ?? from.toMs;
        await copyTable(tier.table, `x.bucket_ms <= ${cutMs}`);
        // The target's tier now starts where the source's did; its later buckets are stored
        // from the copied samples, and its chunks compressed again with the copied rows.
        await tx`
          insert into tier_fills (tier, filled_from_ms, filled_to_ms)
          values (${tier.name}, ${from.fromMs}, ${cutMs})
          on conflict (tier) do update
          set filled_from_ms = least(tier_fills.filled_from_ms, excluded.filled_from_ms),
            compressed_to_ms = 0`;
      }
      if (copy.phase === 'catch-up') {
        const { offsets } = copy;
        const [newest] = await reading<{ newest_time_ms: string | null }[]>`
          select newest_time_ms from consumer_offsets
          where group_id = ${offsets.groupId} and topic = ${offsets.topic}
            and partition = ${offsets.partition}`;
        await tx`
          insert into consumer_offsets as c
            (group_id, topic, partition, next_offset, newest_time_ms)
          values (${offsets.groupId}, ${offsets.topic}, ${offsets.partition}, ${offsets.nextOffset},
            ${newest?.newest_time_ms ?? null})
          on conflict (group_id, topic, partition) do update
          set next_offset = excluded.next_offset,
            newest_time_ms = greatest(c.newest_time_ms, excluded.newest_time_ms), moved_to = null`;
      }
      return { services, series, rows };
    });
    await reading.unsafe('commit');
    inTransaction = false;
    return { ...copied, cut };
  } finally {
    if (inTransaction) await reading.unsafe('rollback').catch(() => undefined);
    reading.release();
  }
}

/**
 * On the shard a partition leaves: its services hidden (kept as control copies) and its
 * writer offsets row fenced (`moved_to`), in one transaction, so that a writer still routing
 * the partition here stores nothing of it (`PartitionMovedError`). `movedTo` null undoes both
 * (a move given up).
 */
export async function fenceMovedPartition(
  db: Database,
  serviceIds: readonly string[],
  partition: { groupId: string; topic: string; partition: number },
  movedTo: string | null,
): Promise<void> {
  await db.sql.begin(async (tx) => {
    await tx`
      update services set shard_copy = ${movedTo !== null} where id = any(${[...serviceIds]})`;
    await tx`
      insert into consumer_offsets as c (group_id, topic, partition, next_offset, moved_to)
      values (${partition.groupId}, ${partition.topic}, ${partition.partition}, 0, ${movedTo})
      on conflict (group_id, topic, partition) do update set moved_to = excluded.moved_to`;
  });
}

/** On the shard a partition moved to: its copied services shown (see `copyShardServices`). */
export async function showMovedServices(
  db: Database,
  serviceIds: readonly string[],
): Promise<void> {
  await db.sql`update services set shard_copy = false where id = any(${[...serviceIds]})`;
}

/**
 * Deletes everything stored of `serviceIds` but the services themselves, then those too unless
 * `keepServices` (the control database keeps its copies of them: alerts refer to them).
 */
export async function dropShardServices(
  db: Database,
  serviceIds: readonly string[],
  options: { keepServices: boolean },
): Promise<void> {
  await db.sql.begin(async (tx) => {
    await deleteServicesData(tx, serviceIds);
    if (!options.keepServices) {
      await tx`delete from services where id = any(${[...serviceIds]})`;
    }
  });
}

async function deleteServicesData(tx: TransactionSql, serviceIds: readonly string[]) {
  const ids = [...serviceIds];
  // Compressed rows are deleted too: TimescaleDB otherwise stops a statement after it
  // decompressed 100,000 of them (a partition holds millions). With the series as an array,
  // not a subquery, it drops whole compressed batches of a series (its segment) without
  // decompressing them. (On plain PostgreSQL the setting is a placeholder nothing reads.)
  await tx`set local timescaledb.max_tuples_decompressed_per_dml_transaction = 0`;
  const series = await tx<{ id: string }[]>`
    select id::text as id from series where service_id = any(${ids})`;
  const seriesIds = series.map((row) => row.id);
  for (const table of [...seriesTables, ...keptTiers.map((tier) => tier.table)]) {
    await tx.unsafe(`delete from ${table} where series_id = any($1::bigint[])`, [seriesIds]);
  }
  await tx`delete from snapshots where service_id = any(${ids})`;
  await tx`delete from series where service_id = any(${ids})`;
}

async function readFills(
  sql: Queryable | Sql,
): Promise<Map<string, { fromMs: number; toMs: number }>> {
  const rows = await (sql as Sql)<{ tier: string; from_ms: string; to_ms: string }[]>`
    select tier, filled_from_ms::text as from_ms, filled_to_ms::text as to_ms from tier_fills`;
  return new Map(
    rows.map((row) => [row.tier, { fromMs: Number(row.from_ms), toMs: Number(row.to_ms) }]),
  );
}

async function columnsOf(tx: TransactionSql, table: string): Promise<string[]> {
  const rows = await tx<{ column_name: string }[]>`
    select column_name from information_schema.columns
    where table_schema = current_schema() and table_name = ${table}
    order by ordinal_position`;
  return rows.map((row) => row.column_name);
}
