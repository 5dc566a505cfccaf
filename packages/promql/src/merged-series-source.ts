import type { FloatHistogram } from './float-histogram.js';
import { compareLabels, labelsKey } from './labels.js';
import type { Labels } from './labels.js';
import { PromqlError } from './promql-error.js';
import type { SeriesBuckets } from './series-buckets.js';
import type { SeriesSource, SourceSeries } from './series-source.js';

/** One part of a store split by series (a sample shard), under its name. */
export type SourcePart = { name: string; source: SeriesSource };

/**
 * Partial answers (Thanos' `partial_response`): a part whose failure `skips` accepts (a shard
 * that is away) is left out of the answer instead of failing it, and `leftOut` is told, so the
 * answer can say so in its warnings. A failure it does not accept, or every part failing,
 * still fails the call.
 */
export type PartialAnswers = {
  skips(err: unknown): boolean;
  leftOut(part: string, err: unknown): void;
};

/**
 * A source over parts that each hold some of the series, asked in parallel. A series found in
 * several parts (a partition being moved between shards holds it in both for a while) is
 * merged by time, the earlier part's point standing where both have one. A part that fails
 * fails the call, and the others are aborted: an answer never leaves a part's series out,
 * unless `options.partial` asks for that and is told.
 */
export function createMergedSeriesSource(
  parts: readonly SourcePart[],
  options: { partial?: PartialAnswers } = {},
): SeriesSource {
  const [only] = parts;
  if (only === undefined) throw new Error('a merged source needs at least one part');
  if (parts.length === 1) return only.source;
  const { partial } = options;

  /** Every answering part's answer, or the first failure once every part stopped. */
  async function fromEach<T>(
    signal: AbortSignal,
    ask: (source: SeriesSource, signal: AbortSignal) => Promise<T>,
  ): Promise<T[]> {
    const each = new AbortController();
    const abort = (): void => each.abort(signal.reason);
    signal.addEventListener('abort', abort, { once: true });
    // The failure that stopped the others: theirs, once aborted, only echo it.
    let cause: { err: unknown } | undefined;
    const leftOut: { part: string; err: unknown }[] = [];
    try {
      const settled = await Promise.allSettled(
        parts.map(({ name, source }) =>
          ask(source, each.signal).then(
            (value) => ({ value }),
            (err: unknown) => {
              if (partial !== undefined && !each.signal.aborted && partial.skips(err)) {
                leftOut.push({ part: name, err });
                return undefined;
              }
              cause ??= { err };
              each.abort(err); // the others' work is wasted now
              throw err;
            },
          ),
        ),
      );
      if (cause !== undefined) throw cause.err;
      const answers = settled.flatMap((outcome) =>
        outcome.status === 'fulfilled' && outcome.value !== undefined ? [outcome.value.value] : [],
      );
      // Nothing answered: there is no part of an answer to give.
      if (answers.length === 0 && leftOut[0] !== undefined) throw leftOut[0].err;
      for (const { part, err } of leftOut) partial?.leftOut(part, err);
      return answers;
    } finally {
      signal.removeEventListener('abort', abort);
    }
  }

  return {
    async select(matchers, range, hints, signal) {
      const answers = await fromEach(signal, (source, each) =>
        source.select(matchers, range, hints, each),
      );
      const byLabels = new Map<string, SourceSeries>();
      for (const series of answers.flat()) {
        const key = labelsKey(series.labels);
        const earlier = byLabels.get(key);
        byLabels.set(key, earlier === undefined ? series : mergeSeries(earlier, series));
      }
      return [...byLabels.values()];
    },
    async series(matcherSets, range, limit, signal) {
      const answers = await fromEach(signal, (source, each) =>
        source.series(matcherSets, range, limit, each),
      );
      const byLabels = new Map<string, Labels>();
      for (const labels of answers.flat()) byLabels.set(labelsKey(labels), labels);
      return [...byLabels.values()].sort(compareLabels).slice(0, limit);
    },
    async labelNames(matcherSets, range, signal) {
      return sortedUnion(
        await fromEach(signal, (source, each) => source.labelNames(matcherSets, range, each)),
      );
    },
    async labelValues(name, matcherSets, range, signal) {
      return sortedUnion(
        await fromEach(signal, (source, each) =>
          source.labelValues(name, matcherSets, range, each),
        ),
      );
    },
  };
}

function sortedUnion(lists: readonly string[][]): string[] {
  return [...new Set(lists.flat())].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
}

/**
 * One series out of two answers for it, in time order; at a time both hold, `first`'s point.
 * Staleness markers stay markers: a NaN of a side without `stale` flags is one.
 */
export function mergeSeries(first: SourceSeries, second: SourceSeries): SourceSeries {
  if (
    (first.buckets === undefined) !== (second.buckets === undefined) ||
    (first.buckets !== undefined && first.buckets.widthMs !== second.buckets?.widthMs)
  ) {
    throw new PromqlError(
      'execution',
      'the shards answered one series at different resolutions (a rollup tier and raw samples)',
    );
  }
  const flagged = first.stale !== undefined || second.stale !== undefined;
  const isMarker = (series: SourceSeries, i: number): boolean =>
    series.stale === undefined ? Number.isNaN(series.values[i]) : series.stale[i] === 1;
  const timestampsMs: number[] = [];
  const values: number[] = [];
  const stale: number[] = [];
  const buckets = first.buckets === undefined ? undefined : emptyBuckets(first.buckets);
  const bucketIndex = [0, 0];
  let markers = 0;
  let i = 0;
  let j = 0;
  const take = (series: SourceSeries, side: 0 | 1, at: number): void => {
    const marker = isMarker(series, at);
    timestampsMs.push(series.timestampsMs[at] as number);
    values.push(series.values[at] as number);
    stale.push(marker ? 1 : 0);
    if (marker) markers++;
    else if (buckets !== undefined && series.buckets !== undefined) {
      pushBucket(buckets, series.buckets, bucketIndex[side] as number);
    }
    if (!marker) bucketIndex[side] = (bucketIndex[side] as number) + 1;
  };
  const skip = (series: SourceSeries, side: 0 | 1, at: number): void => {
    if (!isMarker(series, at)) bucketIndex[side] = (bucketIndex[side] as number) + 1;
  };
  while (i < first.timestampsMs.length || j < second.timestampsMs.length) {
    const a = i < first.timestampsMs.length ? (first.timestampsMs[i] as number) : Infinity;
    const b = j < second.timestampsMs.length ? (second.timestampsMs[j] as number) : Infinity;
    if (a <= b) {
      take(first, 0, i++);
      if (a === b) skip(second, 1, j++);
    } else {
      take(second, 1, j++);
    }
  }
  const histograms = mergeHistograms(first.histograms, second.histograms);
  return {
    labels: first.labels,
    timestampsMs,
    values,
    ...(flagged ? { stale } : {}),
    markers,
    ...(histograms === undefined ? {} : { histograms }),
    ...(buckets === undefined ? {} : { buckets }),
  };
}

type Histograms = NonNullable<SourceSeries['histograms']>;

function mergeHistograms(
  first: Histograms | undefined,
  second: Histograms | undefined,
): Histograms | undefined {
  if (first === undefined || second === undefined) return first ?? second;
  const timestampsMs: number[] = [];
  const values: FloatHistogram[] = [];
  let i = 0;
  let j = 0;
  while (i < first.timestampsMs.length || j < second.timestampsMs.length) {
    const a = i < first.timestampsMs.length ? (first.timestampsMs[i] as number) : Infinity;
    const b = j < second.timestampsMs.length ? (second.timestampsMs[j] as number) : Infinity;
    if (a <= b) {
      timestampsMs.push(a);
      values.push(first.values[i++] as FloatHistogram);
      if (a === b) j++;
    } else {
      timestampsMs.push(b);
      values.push(second.values[j++] as FloatHistogram);
    }
  }
  return { timestampsMs, values };
}

type GrowingBuckets = SeriesBuckets & {
  count: number[];
  sum: number[];
  min: number[];
  max: number[];
  resetSum: number[];
};

function emptyBuckets(like: SeriesBuckets): GrowingBuckets {
  return {
    widthMs: like.widthMs,
    exactTimes: like.exactTimes,
    count: [],
    sum: [],
    min: [],
    max: [],
    resetSum: [],
  };
}

function pushBucket(into: GrowingBuckets, from: SeriesBuckets, at: number): void {
  into.count.push(from.count[at] as number);
  into.sum.push(from.sum[at] as number);
  into.min.push(from.min[at] as number);
  into.max.push(from.max[at] as number);
  into.resetSum.push(from.resetSum[at] as number);
}
