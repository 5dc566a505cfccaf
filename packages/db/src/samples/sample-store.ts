import { seriesOrder } from './series-order.js';
import { createSeriesCache } from './series-cache.js';
import { seriesKey } from './series-ids.js';
import type { Database } from '../core/database.js';
import { sqlState } from '../core/classify-db-error.js';
import { transactionCommittingLast } from '../core/transaction-committing-last.js';
import type { HostSample, SampleBatch } from './sample-batch.js';
import {
  nextOffsets,
  partitionsRestarted,
  skipWritten,
  summarizeServices,
} from './sample-batch.js';
import type { LockedOffsets, OffsetOwner } from './sample-offsets.js';
import { lockOffsets, raiseNewestBound, readNewestBound, storeOffsets } from './sample-offsets.js';
import type { DedupPlan } from './sample-dedup.js';
import { planDedup, resolveChecks } from './sample-dedup.js';
import { selectStoredPoints } from './stored-points.js';
import { createStoredNewest } from './stored-newest.js';
import type { UnaggregatedRows } from './unaggregated-samples.js';
import type { WrittenCounts } from './sample-rows.js';
import {
  copyRows,
  insertExemplars,
  insertHistograms,
  insertRows,
  insertStaleMarkers,
  scaleValues,
  toRows,
} from './sample-rows.js';
import { createSeriesScales } from './series-scales.js';
import type { SampleTimeColumn } from './copy-binary.js';
import { readSampleTimeColumn } from './copy-binary.js';
import { insertUnaggregatedSamples } from './unaggregated-samples.js';
import {
  createLateWritesTableCheck,
  insertLateSampleWrites,
  lateHoursOf,
} from './late-sample-writes.js';
import type { LearnedSeries } from './sample-series.js';
import { resolveMissingSeries } from './sample-series.js';
import {
  checkedSummaries,
  ensureServices,
  projectServices,
  selectServiceIds,
  serviceNamesOf,
} from './service-projection.js';

export type { OffsetOwner } from './sample-offsets.js';

type WriteBatchResult = {
  /** Rows inserted into `samples` or `unaggregated_samples` (one per metric value). */
  samplesWritten: number;
  /**
   * Metric values not inserted because their (series, time) was already stored or came earlier
   * in the batch: the first value stands (sample-dedup.ts).
   */
  duplicatesSkipped: number;
  /** Of `duplicatesSkipped`, those whose value differed from the one that stands. */
  differentValuesDropped: number;
  /** Host samples skipped because their offset was already written (a replay). */
  replaysSkipped: number;
  /**
   * Partitions whose stored offset was past their log's end: an earlier log of the same name
   * (the topic was created again). Their offsets started afresh and nothing was skipped.
   */
  partitionsRestarted: number[];
  /** Snapshot rows inserted (samples with containers or processes). */
  snapshotsWritten: number;
  /**
   * Staleness markers inserted (a marker already stored, or of a host that has no service, is
   * not).
   */
  staleMarkersWritten: number;
  /** Exemplars inserted (as staleness markers are). */
  exemplarsWritten: number;
  /** Native histograms inserted (as staleness markers are). */
  histogramsWritten: number;
  /** Services created by this batch (first sample of a host). */
  servicesCreated: number;
};

export type SampleStore = {
  /**
   * Stores a batch in two steps that run side by side, on two connections: in one transaction,
   * the samples, staleness markers, snapshots, each partition's next offset and the rows of
   * services seen for the first time; in statements of their own, the services projection
   * (last_seen, latest metrics, tags) of every sample of the batch, replays included.
   * Idempotent on (series, time), on log positions and in the projection (it only moves
   * forward): a replayed batch writes no sample again, and completes a projection that a crash
   * left behind. Resolves once both are done; throws (through the package's boundary: a
   * DatabaseUnavailableError when a retry can help, a DatabaseRefusedError when not) once both
   * settled, either step possibly done, so write the batch again.
   */
  writeBatch(batch: SampleBatch, owner?: OffsetOwner): Promise<WriteBatchResult>;
};

export type SampleStoreOptions = {
  /**
   * How samples and snapshots go in. `copy` (default): COPY straight into the tables (fastest
   * per row), or for a small batch a plain INSERT (fewest round trips), falling back to `insert`
   * for a batch that holds an already-stored key. `insert`: INSERT … SELECT FROM unnest(…)
   * ON CONFLICT DO NOTHING (a test compares the two).
   */
  method?: 'copy' | 'insert';
  /**
   * About how many series ids ((service, metric, labels) → `series.id`) the store keeps in memory,
   * services unused for longest dropped first (default 200,000: 10 to 19 MB). Misses are looked
   * up, and new series created, with one statement per batch.
   */
  seriesCacheEntries?: number;
  /**
   * Samples this much older than the clock when written are recorded as late
   * (late-sample-writes.ts), for the query cache: half its settled horizon, so that a clock a
   * little off between the roles misses none. Default 300,000.
   */
  lateAfterMs?: number;
  nowMs?: () => number;
};

/**
 * Up to this many samples a batch goes in by INSERT, not COPY: an INSERT goes out with the
 * offsets and the COMMIT, where a COPY takes two round trips of its own (its start, then its
 * rows). Small batches are the latency-bound ones (one host per request, each waiting for its
 * batch's commit).
 */
const insertedRowsMax = 2000;
const uniqueViolation = '23505';
/**
 * A new fleet's services and series have no statistics until autovacuum's first analyze, a
 * minute or more after its first samples: until then every batch's joins on them scan them whole
 * (measured: monitor all's single-host requests went from 6.1k to 8.8k/s after one ANALYZE of a
 * 10,000-host fleet). So the store analyzes the two itself, each time the services it created
 * doubled, from this many on.
 */
const firstAnalyzeAfterServices = 100;

export function createSampleStore(db: Database, options: SampleStoreOptions = {}): SampleStore {
  const { sql } = db;
  const seriesCache = createSeriesCache(options.seriesCacheEntries);
  const seriesScales = createSeriesScales();
  const storedNewest = createStoredNewest();
  const copy = (options.method ?? 'copy') === 'copy';
  const lateAfterMs = options.lateAfterMs ?? 300_000;
  const nowMs = options.nowMs ?? Date.now;
  const lateWritesTable = createLateWritesTableCheck(nowMs);
  let servicesCreated = 0;
  let analyzeAt = firstAnalyzeAfterServices;
  let timeColumn: Promise<SampleTimeColumn> | undefined;
  // Read once from the schema: it changes only with a migration, which runs before a store is
  // made. Asked again after a failure.
  const sampleTimeColumn = (): Promise<SampleTimeColumn> => {
    timeColumn ??= readSampleTimeColumn(db).catch((err: unknown) => {
      timeColumn = undefined;
      throw err;
    });
    return timeColumn;
  };

  return {
    async writeBatch(batch, owner) {
      const next = nextOffsets(batch);
      if (next.size > 0 && owner === undefined) {
        throw new TypeError('writeBatch: samples with positions need an offset owner');
      }
      // Series ids learned by this batch, cached only once it committed: a series created by a
      // transaction that rolled back does not exist.
      let learned: LearnedSeries[] = [];
      // The series' newest bounds once the batch stored them, kept only once it committed.
      let newest: DedupPlan['newest'] = { seriesIds: [], timesMs: [] };
      // The projection of every sample of the batch, replays included (a crash between the
      // samples' commit and the projection's leaves it to the redelivered batch), on a
      // connection of its own while the samples' transaction runs: the batch then takes the
      // longer of the two, not their sum. It may land first: it only moves forward, a
      // service it creates is the one the transaction then reads, and a transaction that fails
      // is written again with its batch.
      const projection = summarizeServices(batch.samples, { skipInvalid: true });
      const projected =
        projection.length > 0
          ? projectServices(
              sql,
              projection,
              owner === undefined ? undefined : { ...owner, partitions: [...next.keys()] },
            )
          : Promise.resolve({ created: 0 });
      projected.catch(() => undefined); // awaited below; not unhandled while the samples go in
      // What nothing here waits for (the stale markers, the offsets, a small batch's samples)
      // goes out with the COMMIT: small batches are all round trips.
      // The unaggregated samples of the attempt that committed, counted into the result once
      // it did (their statement settles beside the samples' own, in any order).
      let unaggregated = { written: 0, skipped: 0 };
      const times = await sampleTimeColumn();
      const writeOnce = (method: 'copy' | 'insert'): Promise<WriteBatchResult> =>
        transactionCommittingLast(sql, async (tx) => {
          unaggregated = { written: 0, skipped: 0 };
          newest = { seriesIds: [], timesMs: [] };
          // Both reads go out together, one round trip: the stored offsets and the services of
          // every host of the batch (replays included: they are few, and it saves a wait).
          const [locked, knownServices] = await Promise.all([
            owner === undefined
              ? readNewestBound(tx).then((newestBoundMs): LockedOffsets => ({
                  nextOffsets: new Map(),
                  newestBoundMs,
                }))
              : lockOffsets(tx, owner, next),
            selectServiceIds(tx, serviceNamesOf(batch.samples)),
          ]);
          const stored = locked.nextOffsets;
          storedNewest.continueFrom(stored);
          const restarted = partitionsRestarted(batch.samples, stored);
          for (const partition of restarted) stored.delete(partition);
          const { fresh, skipped } = skipWritten(batch.samples, stored);
          const result: WriteBatchResult = {
            samplesWritten: 0,
            duplicatesSkipped: 0,
            differentValuesDropped: 0,
            replaysSkipped: skipped,
            partitionsRestarted: [...restarted],
            snapshotsWritten: 0,
            staleMarkersWritten: 0,
            exemplarsWritten: 0,
            histogramsWritten: 0,
            servicesCreated: 0,
          };
          const last: Promise<unknown>[] = [];
          if (fresh.length > 0) {
            // Without replays (the usual case) the projection's summaries are the batch's:
            // checked as storable, not summarized twice.
            const summaries =
              skipped === 0 ? checkedSummaries(fresh, projection) : summarizeServices(fresh);
            const services = await ensureServices(tx, summaries, knownServices);
            result.servicesCreated = services.created;
            const rows = toRows(fresh, services.ids, seriesCache);
            learned = await resolveMissingSeries(tx, rows);
            const seriesRows = seriesOrder(rows.samples.seriesIds, rows.samples.timesMs);
            const plan = planDedup({
              samples: rows.samples,
              order: seriesRows,
              unaggregated: rows.unaggregated,
              storedNewestBound: (seriesId) =>
                storedNewest.boundOf(seriesId) ?? locked.newestBoundMs,
            });
            if (plan.checks.length > 0) {
              resolveChecks(plan, await selectStoredPoints(tx, plan.checks));
            }
            newest = plan.newest;
            result.duplicatesSkipped = plan.sameValues + plan.differentValues;
            result.differentValuesDropped = plan.differentValues;
            const order = keptOrder(plan.keepSamples, seriesRows);
            rows.unaggregated = keptRows(rows.unaggregated, plan.keepUnaggregated);
            scaleValues(rows.samples, seriesScales);
            // Asked before any statement goes out unawaited: one that fails while this waits
            // would be a rejection nothing handles yet.
            const late = lateHoursOf(fresh, nowMs() - lateAfterMs);
            const recordLate = late.orgIds.length > 0 && (await lateWritesTable(tx));
            if (method === 'copy' && rows.samples.timesMs.length > insertedRowsMax) {
              // A COPY holds the connection until it is done: nothing goes out with it.
              addWritten(result, await copyRows(tx, rows, order, times));
            } else {
              const conflicts = method === 'copy' ? 'fail' : 'skip';
              last.push(
                insertRows(tx, rows, order, conflicts, times).then((written) =>
                  addWritten(result, written),
                ),
              );
            }
            if (recordLate) last.push(insertLateSampleWrites(tx, late));
            last.push(
              insertStaleMarkers(tx, rows).then((count) => (result.staleMarkersWritten = count)),
              insertExemplars(tx, rows).then((count) => (result.exemplarsWritten = count)),
              insertHistograms(tx, rows).then((count) => (result.histogramsWritten = count)),
              insertUnaggregatedSamples(tx, rows.unaggregated).then((counts) => {
                unaggregated = counts;
              }),
            );
          }
          if (owner !== undefined && next.size > 0) {
            last.push(storeOffsets(tx, owner, next, restarted, newestByPartition(fresh)));
          } else if (owner === undefined && fresh.length > 0) {
            let newestMs = Number.NEGATIVE_INFINITY;
            for (const sample of fresh) newestMs = Math.max(newestMs, sample.timeMs);
            last.push(raiseNewestBound(tx, newestMs));
          }
          return { result, last };
        });
      const written = (async () => {
        try {
          return await writeOnce(copy ? 'copy' : 'insert');
        } catch (err) {
          // Where samples still have a unique key (plain PostgreSQL; TimescaleDB while an old
          // layout moves in), a key stored between the duplicate check and the write fails a
          // COPY or a plain INSERT as a whole, and with it the transaction: write the batch
          // again on the ON CONFLICT path. Rarer than a savepoint around every statement is
          // costly (a round trip).
          if (!copy || sqlState(err) !== uniqueViolation) throw err;
          return await writeOnce('insert');
        }
      })();
      // Both settle before either's error is thrown: the batch is written again only once
      // nothing of this attempt is still running.
      const [samples, services] = await Promise.allSettled([written, projected]);
      if (samples.status === 'rejected') throw samples.reason;
      if (services.status === 'rejected') throw services.reason;
      samples.value.samplesWritten += unaggregated.written;
      samples.value.duplicatesSkipped += unaggregated.skipped;
      storedNewest.committed(newest, owner === undefined ? new Map() : next);
      for (const { serviceId, generation, metric, labels, id } of learned) {
        seriesCache.add(serviceId, generation, seriesKey(metric, labels), id);
      }
      // A service is created by whichever of the two got to it first.
      samples.value.servicesCreated += services.value.created;
      servicesCreated += samples.value.servicesCreated;
      if (servicesCreated >= analyzeAt) {
        analyzeAt = servicesCreated * 2;
        // Best effort: autovacuum gets there too, only later.
        await sql`analyze services, series`.catch(() => undefined);
      }
      return samples.value;
    },
  };
}

/** Adds what the samples' and snapshots' statements wrote to the batch's result. */
function addWritten(result: WriteBatchResult, written: WrittenCounts): void {
  result.samplesWritten += written.samplesWritten;
  result.duplicatesSkipped += written.duplicatesSkipped;
  result.snapshotsWritten += written.snapshotsWritten;
}

/** The rows of `order` to store. */
function keptOrder(keep: Uint8Array, order: Uint32Array): Uint32Array {
  let kept = 0;
  for (const row of order) kept += keep[row] ?? 0;
  if (kept === order.length) return order;
  const rows = new Uint32Array(kept);
  let at = 0;
  for (const row of order) if (keep[row] === 1) rows[at++] = row;
  return rows;
}

/** The unaggregated rows to store. */
function keptRows(rows: UnaggregatedRows, keep: Uint8Array): UnaggregatedRows {
  const kept = (_: unknown, row: number): boolean => keep[row] === 1;
  return {
    timesMs: rows.timesMs.filter(kept),
    seriesIds: rows.seriesIds.filter(kept),
    values: rows.values.filter(kept),
    samplesBefore: rows.samplesBefore.filter(kept),
  };
}

/** Each partition's newest sample time in the batch. */
function newestByPartition(samples: readonly HostSample[]): Map<number, number> {
  const newest = new Map<number, number>();
  for (const { position, timeMs } of samples) {
    if (position === undefined) continue;
    newest.set(position.partition, Math.max(newest.get(position.partition) ?? timeMs, timeMs));
  }
  return newest;
}
