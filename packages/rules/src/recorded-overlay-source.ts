import type { FloatHistogram, Labels, SeriesSource, SourceSeries } from '@monitor/promql';
import { labelsKey } from '@monitor/promql';

/**
 * A sample one rule of a group wrote during this evaluation; `stale`: the staleness marker of a
 * series the rule wrote last time and not now.
 */
export type OverlaySample = {
  labels: Labels;
  timeMs: number;
  value: number;
  stale?: boolean;
  histogram?: FloatHistogram;
};

/**
 * `base` with the samples written so far in this evaluation laid over it, so that a rule sees
 * what the rules before it in its group recorded at the same time, and no longer sees what they
 * stopped writing, as Prometheus commits each rule's samples and staleness markers before
 * evaluating the next. The overlay's NaNs are values; only `stale` samples are markers.
 */
export function createRecordedOverlaySource(
  base: SeriesSource,
  overlay: readonly OverlaySample[],
): SeriesSource {
  return {
    ...base,
    async select(matchers, range, hints, signal) {
      const selected = await base.select(matchers, range, hints, signal);
      const added = overlay.filter(
        (s) =>
          s.timeMs >= range.startMs &&
          s.timeMs <= range.endMs &&
          matchers.every((m) => m.matches(s.labels.find((l) => l.name === m.name)?.value ?? '')),
      );
      if (added.length === 0) return selected;
      const byKey = new Map(selected.map((series) => [labelsKey(series.labels), series]));
      for (const sample of added) {
        const key = labelsKey(sample.labels);
        byKey.set(key, withSample(byKey.get(key), sample));
      }
      return [...byKey.values()];
    },
  };
}

function withSample(series: SourceSeries | undefined, sample: OverlaySample): SourceSeries {
  if (sample.histogram !== undefined) return withHistogram(series, sample, sample.histogram);
  const times = series === undefined ? [] : Array.from(series.timestampsMs);
  const values = series === undefined ? [] : Array.from(series.values);
  const stale =
    series === undefined
      ? []
      : series.stale === undefined
        ? values.map((v) => (Number.isNaN(v) ? 1 : 0))
        : Array.from(series.stale);
  let at = times.findIndex((t) => t >= sample.timeMs);
  if (at === -1) at = times.length;
  const replaces = times[at] === sample.timeMs ? 1 : 0;
  times.splice(at, replaces, sample.timeMs);
  values.splice(at, replaces, sample.value);
  stale.splice(at, replaces, sample.stale === true ? 1 : 0);
  return {
    labels: sample.labels,
    timestampsMs: times,
    values,
    stale,
    ...(series?.histograms && { histograms: series.histograms }),
  };
}

/** The series with a recorded histogram laid over it at the sample's time. */
function withHistogram(
  series: SourceSeries | undefined,
  sample: OverlaySample,
  histogram: FloatHistogram,
): SourceSeries {
  const times = series?.histograms === undefined ? [] : Array.from(series.histograms.timestampsMs);
  const values = series?.histograms === undefined ? [] : [...series.histograms.values];
  let at = times.findIndex((t) => t >= sample.timeMs);
  if (at === -1) at = times.length;
  const replaces = times[at] === sample.timeMs ? 1 : 0;
  times.splice(at, replaces, sample.timeMs);
  values.splice(at, replaces, histogram);
  return {
    labels: sample.labels,
    timestampsMs: series?.timestampsMs ?? [],
    values: series?.values ?? [],
    ...(series?.stale && { stale: series.stale }),
    histograms: { timestampsMs: times, values },
  };
}
