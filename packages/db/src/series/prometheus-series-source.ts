import type { SeriesSource, SourceSeries } from '@monitor/promql';
import type { Database } from '../core/database.js';
import { translateDbError } from '../core/database-errors.js';
import type { Float64SlabLease } from './binary-arrays.js';
import { readHistograms } from '../histograms/histogram-chunks.js';
import { queryCanceled } from './cancelable.js';
import { createSeriesChooser } from './choose-series.js';
import { mergeSeriesPoints } from './merge-series-points.js';
import { readRawSamples } from './read-samples.js';
import { readTierSeries } from './read-tier-series.js';
import { readStaleMarkers, readUnaggregatedSamples } from './read-sparse-points.js';

/** Statements one selection runs at once (the pool holds DATABASE_POOL_MAX, 10 by default). */
const readConcurrency = 4;

const guarded =
  <A extends unknown[], R>(fn: (...args: A) => Promise<R>) =>
  async (...args: A): Promise<R> => {
    try {
      return await fn(...args);
    } catch (err) {
      throw translateDbError(err);
    }
  };

/**
 * The database side of PromQL's SeriesSource, for one organization: series chosen by their
 * labels (choose-series.ts), samples read raw from `samples` (read-samples.ts: compressed
 * batches decoded here, read-compressed-samples.ts) and
 * `unaggregated_samples` (read-sparse-points.ts; see `select` for why never from the rollups),
 * staleness markers flagged, merged per series (merge-series-points.ts), native histograms
 * beside them (histogram-chunks.ts).
 * Errors come out as the package's typed errors (DatabaseUnavailableError: retry).
 */
export function createPrometheusSeriesSource(
  db: Database,
  orgId: string,
  options: {
    /**
     * Where the query's samples are decoded: a pool's slabs, handed back once its answer is
     * written (createFloat64SlabPool). Without one, each read's slabs are its own.
     */
    slabs?: Float64SlabLease;
  } = {},
): SeriesSource {
  const { sql } = db;
  const chooser = createSeriesChooser(sql, orgId);

  return {
    /**
     * Raw samples, or with `hints.resolutionMs` the rollup tier of that width
     * (read-tier-series.ts). Never samples_1m/samples_1h: they hold per-bucket avg/min/max/
     * count/sum over half-open minutes and hours, and PromQL reads closed windows
     * [t - range, t] and single samples (lookback), which no such bucket answers.
     */
    select: guarded(async (matchers, range, hints, signal): Promise<SourceSeries[]> => {
      if (signal.aborted) throw queryCanceled(signal);
      let selected = await chooser.matching(matchers);
      if (selected.length > hints.maxSeries) selected = selected.slice(0, hints.maxSeries + 1);
      if (selected.length === 0) return [];
      const resolutionMs = hints.resolutionMs ?? 0;
      if (resolutionMs > 0)
        return await readTierSeries(
          sql,
          selected,
          range,
          resolutionMs,
          hints.func,
          signal,
          options.slabs,
        );
      // A few statements side by side (readRawSamples): each reads its share of the series,
      // so the server spends more than one core on a query over many series. The markers and
      // the unaggregated samples, few, in one more each.
      const ids = selected.flatMap((row) => row.ids);
      const share = Math.ceil(ids.length / readConcurrency);
      const parts: string[][] = [];
      for (let i = 0; i < ids.length; i += share) parts.push(ids.slice(i, i + share));
      // The reads listen to a signal of their own, so that `signal` (shared by every selection
      // of a query) gets one listener per selection, not one per read: Node warns past ten.
      const reads = new AbortController();
      const onAbort = (): void => reads.abort(signal.reason);
      signal.addEventListener('abort', onAbort);
      const [histograms, markers, unaggregated, samples] = await Promise.all([
        readHistograms(db, ids, range.startMs, range.endMs),
        readStaleMarkers(sql, ids, range),
        readUnaggregatedSamples(sql, ids, range),
        readRawSamples(db, parts, range, reads.signal, options.slabs),
      ])
        .catch((err: unknown) => {
          // A read that fails once the query was canceled is canceled, whatever statement
          // noticed it.
          if (signal.aborted) throw queryCanceled(signal);
          throw err;
        })
        .finally(() => signal.removeEventListener('abort', onAbort));
      return selected.map((row) => {
        const series = mergeSeriesPoints(row.labels, row.ids, [
          samples,
          unaggregated ?? new Map(),
          markers ?? new Map(),
        ]);
        // Custom-bucket histograms (schema -53) came after Prometheus 2.42, whose PromQL this
        // is: stored and kept, but not read here (docs/promql.md#native-histograms).
        const stored = row.ids
          .flatMap((id) => histograms.get(id) ?? [])
          .filter((s) => s.histogram.customValues.length === 0);
        if (stored.length === 0) return series;
        // One labelset under two ids (labels as written): their histograms in one time order.
        if (row.ids.length > 1) stored.sort((a, b) => a.timeMs - b.timeMs);
        const timestampsMs = stored.map((s) => s.timeMs);
        return { ...series, histograms: { timestampsMs, values: stored.map((s) => s.histogram) } };
      });
    }),

    series: guarded(async (sets, range, limit) => {
      const rows = await chooser.matchingAnyWithPoints(sets, range);
      return rows.slice(0, limit).map((r) => r.labels);
    }),

    labelNames: guarded(async (sets, range) => {
      const names = new Set<string>();
      for (const row of await chooser.matchingAnyWithPoints(sets, range)) {
        for (const l of row.labels) names.add(l.name);
      }
      return [...names].sort();
    }),

    labelValues: guarded(async (name, sets, range) => {
      const values = new Set<string>();
      for (const row of await chooser.matchingAnyWithPoints(sets, range)) {
        for (const l of row.labels) if (l.name === name) values.add(l.value);
      }
      return [...values].sort();
    }),
  };
}
