import type { FloatHistogram } from './float-histogram.js';
import type { LabelMatcher } from './label-matcher.js';
import type { Labels } from './labels.js';
import { compareLabels, getLabel, labelsFrom } from './labels.js';
import type { BucketAggregate } from './series-buckets.js';
import { bucketAggregatesRead, bucketEndOf, bucketSeries } from './series-buckets.js';
import type { SeriesSource, SourceSeries, TimeRange } from './series-source.js';

/**
 * A series for the in-memory source: labels and [ms, value] samples in time order. Without
 * `stale`, every NaN value is a staleness marker; with it (one flag per sample, 1 for a marker),
 * only the flagged samples are, as in SourceSeries.
 */
export type MemorySeries = {
  labels: Record<string, string>;
  samples: [number, number][];
  stale?: number[];
  /** Native histogram samples, [ms, histogram] in time order (raw reads only). */
  histograms?: [number, FloatHistogram][];
};

function matchesAll(labels: Labels, matchers: readonly LabelMatcher[]): boolean {
  return matchers.every((m) => m.matches(getLabel(labels, m.name)));
}

/** The times a rollup tier keeps of its buckets' last samples (series-buckets.ts). */
export type TierTimes = 'samples' | 'bucketEnds';

/**
 * A SeriesSource over series held in memory: the reference the evaluator's tests use, and a
 * statement of the port's contract in a few lines. A selection with `resolutionMs` reads the
 * series as a rollup tier of that width holds them: every bucket that overlaps the range, with
 * `tierTimes`' times (series-buckets.ts; `samples`, the last samples' own, by default).
 */
export function createMemorySeriesSource(
  input: readonly MemorySeries[],
  options: { tierTimes?: TierTimes } = {},
): SeriesSource {
  const all = input
    .map((s) => ({
      labels: labelsFrom(s.labels),
      samples: s.samples,
      stale: s.stale,
      histograms: s.histograms ?? [],
    }))
    .sort((a, b) => compareLabels(a.labels, b.labels));
  const within = (t: number, range: TimeRange): boolean => t >= range.startMs && t <= range.endMs;
  const inRange = (samples: [number, number][], range: TimeRange): [number, number][] =>
    samples.filter(([t]) => within(t, range));
  const matching = (sets: readonly (readonly LabelMatcher[])[], range: TimeRange) =>
    all.filter(
      (s) =>
        (sets.length === 0 || sets.some((set) => matchesAll(s.labels, set))) &&
        (inRange(s.samples, range).length > 0 || s.histograms.some(([t]) => within(t, range))),
    );
  return {
    select(matchers, range, hints) {
      const out: SourceSeries[] = [];
      const widthMs = hints.resolutionMs ?? 0;
      for (const s of all) {
        if (!matchesAll(s.labels, matchers)) continue;
        if (widthMs > 0) {
          const times = options.tierTimes ?? 'samples';
          const read = bucketAggregatesRead(hints.func);
          out.push({ labels: s.labels, ...tierOf(s, range, { widthMs, times, read }) });
          continue;
        }
        const samples = inRange(s.samples, range);
        out.push({
          labels: s.labels,
          timestampsMs: samples.map(([t]) => t),
          values: samples.map(([, v]) => v),
          ...(s.stale && { stale: s.stale.filter((_, i) => within(s.samples[i]![0], range)) }),
        });
        const histograms = s.histograms.filter(([t]) => within(t, range));
        if (histograms.length > 0) {
          out[out.length - 1]!.histograms = {
            timestampsMs: histograms.map(([t]) => t),
            values: histograms.map(([, h]) => h),
          };
        }
      }
      return Promise.resolve(out);
    },
    series(sets, range, limit) {
      return Promise.resolve(
        matching(sets, range)
          .slice(0, limit)
          .map((s) => s.labels),
      );
    },
    labelNames(sets, range) {
      const names = new Set<string>();
      for (const s of matching(sets, range)) for (const l of s.labels) names.add(l.name);
      return Promise.resolve([...names].sort());
    },
    labelValues(name, sets, range) {
      const values = new Set<string>();
      for (const s of matching(sets, range)) {
        const value = getLabel(s.labels, name);
        if (value !== '') values.add(value);
      }
      return Promise.resolve([...values].sort());
    },
  };
}

/** The buckets of a tier over `series` that overlap `range`. */
function tierOf(
  series: { samples: [number, number][]; stale: number[] | undefined },
  range: TimeRange,
  tier: { widthMs: number; times: TierTimes; read: readonly BucketAggregate[] },
): Omit<SourceSeries, 'labels'> {
  const { widthMs } = tier;
  const values = series.samples.map(([, v]) => v);
  const stale = series.stale ?? values.map((v) => (Number.isNaN(v) ? 1 : 0));
  const all = bucketSeries(
    series.samples.map(([t]) => t),
    values,
    stale,
    widthMs,
  );
  const endOf = (t: number): number => bucketEndOf(t, widthMs);
  const overlaps = (t: number): boolean =>
    endOf(t) >= range.startMs && endOf(t) - widthMs < range.endMs;
  const keep = all.timestampsMs.map(overlaps);
  const bucketKept = all.timestampsMs.filter((_, i) => all.stale[i] === 0).map(overlaps);
  const b = all.buckets;
  const pick = (column: number[]): number[] => column.filter((_, i) => bucketKept[i]);
  // What the selection's function does not read is NaN, as a source may leave it: the tests
  // of the evaluator over tiers check that it reads no more (bucketAggregatesRead).
  const aggregate = (name: BucketAggregate): number[] =>
    tier.read.includes(name) ? pick(b[name]) : pick(b[name]).map(() => Number.NaN);
  // A bucket's end when its last sample (or its closing marker) is there, else the ms before.
  const endTime = (t: number, i: number): number =>
    t === endOf(t) || all.stale[i] === 1 ? endOf(t) : endOf(t) - 1;
  return {
    timestampsMs: all.timestampsMs
      .map((t, i) => (tier.times === 'samples' ? t : endTime(t, i)))
      .filter((_, i) => keep[i]),
    values: all.values.filter((_, i) => keep[i]),
    stale: all.stale.filter((_, i) => keep[i]),
    buckets: {
      widthMs,
      exactTimes: tier.times === 'samples',
      count: pick(b.count),
      sum: aggregate('sum'),
      min: aggregate('min'),
      max: aggregate('max'),
      resetSum: aggregate('resetSum'),
    },
  };
}
