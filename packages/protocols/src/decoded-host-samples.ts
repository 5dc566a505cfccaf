import type { NativeHistogram, SampleExemplar } from '@monitor/schemas';

/**
 * One host's sample as an agent protocol's decoder gives it (before the gateway adds its
 * organization), shaped like an /ingest payload after validation: every name, value and tag
 * already satisfies the /ingest limits and input policy, so the gateway can publish it as is.
 * Unlike an /ingest payload, its tags are the labels of its series: each distinct tag set of a
 * metric on a host is a series of its own (the gateway says so on the bus, `tags_label_series`).
 */
export type ProtocolSample = {
  host: string;
  /** Sample time, epoch milliseconds (an integer). */
  timeMs: number;
  /**
   * Up to `ingestLimits.maxMetricsPerPayload` entries, together with `staleMetrics`; empty only
   * when `staleMetrics` is not.
   */
  metrics: Record<string, number>;
  tags: Record<string, string>;
  /**
   * Metrics whose series ends at `timeMs`: Prometheus staleness markers, stored as such. Absent
   * when there are none.
   */
  staleMetrics?: string[];
  /**
   * Exemplars of this host's series at `timeMs` (each of the metric it names, with these tags);
   * absent when there are none. A sample may hold exemplars only.
   */
  exemplars?: SampleExemplar[];
  /**
   * Native histograms of this host's series at `timeMs`, by metric (with these tags); absent
   * when there are none. A metric has a value or a histogram at a time, never both.
   */
  histograms?: Record<string, NativeHistogram>;
};

/**
 * Why a point (one value for one metric name) was not taken. Counted, never thrown: a body
 * whose points are all rejected decodes to no samples, and the gateway decides the answer.
 */
export const rejectReasons = [
  /** No host could be derived (no `host` label or tag, no `instance`, no resource attribute). */
  'no_host',
  'host_too_long',
  /** A remote-write series without `__name__`, or an empty name. */
  'no_metric_name',
  /** A name that rewriting cannot make valid (`__proto__`). */
  'invalid_metric_name',
  'metric_name_too_long',
  /** An empty tag key, or `__proto__`. */
  'invalid_tag_key',
  'tag_key_too_long',
  'tag_value_too_long',
  'too_many_tags',
  /** NUL or an unpaired UTF-16 surrogate in the host, a tag key or a tag value. */
  'unstorable_text',
  /** Not an integer number of milliseconds within the range of a date (±8.64e15). */
  'invalid_timestamp',
  /** Only with `rawRetentionMs`: the /ingest sample-time window (`checkSampleTime`). */
  'timestamp_in_future',
  'timestamp_too_old',
  /**
   * Storage keeps one point per series (host, metric, tag set) and time: a second one for the
   * same series and time (a value or a staleness marker) loses to the first.
   */
  'duplicate_series_time',
  /**
   * An exemplar whose labels' names and values hold more than Prometheus' 128 characters in
   * all (`ExemplarMaxLabelSetLength`), or text storage cannot hold.
   */
  'invalid_exemplar',
  /**
   * A native histogram Prometheus would refuse (a schema it has no layout for, spans that do not
   * cover the buckets, negative counts, buckets holding more than the count), or with more than
   * INGEST_HISTOGRAM_MAX_BUCKETS buckets (native-histogram.ts).
   */
  'invalid_histogram',
] as const;
export type RejectReason = (typeof rejectReasons)[number];

/** Input that carries no value to store, skipped by design (not an error of the sender). */
export const skipReasons = [
  /** OTLP data point flagged NO_RECORDED_VALUE. */
  'no_recorded_value',
  /** An OTLP number point with neither value set; a collectd `null` (its NaN). */
  'no_value',
  /** A string field of line protocol. */
  'string_field',
] as const;
export type SkipReason = (typeof skipReasons)[number];

/** What every decoder returns, whatever the protocol. */
export type DecodedHostSamples = {
  /** Points of the same (host, time, tag set), in first-seen order. */
  samples: ProtocolSample[];
  /** Points taken: the number of metric and stale-metric entries across `samples`. */
  accepted: number;
  /** Exemplars taken: the number of `exemplars` entries across `samples`. */
  exemplars: number;
  /** Native histograms taken: the number of `histograms` entries across `samples`. */
  histograms: number;
  /** Points not taken, by reason; only reasons that occurred are present. */
  rejected: Partial<Record<RejectReason, number>>;
  /** Input skipped by design, by reason; only reasons that occurred are present. */
  skipped: Partial<Record<SkipReason, number>>;
};

/** Options every decoder takes. */
export type DecodeOptions = {
  /** Receipt time, epoch ms: the time of line-protocol points without one, and the window's now. */
  nowMs: number;
  /**
   * When given, points outside /ingest's sample-time window (more than 10 minutes ahead of
   * `nowMs`, or older than this) are rejected, as /ingest refuses them.
   */
  rawRetentionMs?: number;
  /** Refuse a native histogram of more buckets than this (`invalid_histogram`); 160 if unset. */
  maxHistogramBuckets?: number;
};

/** The sum of a count record (`rejected` or `skipped`). */
export function totalCount(counts: Partial<Record<string, number>>): number {
  let total = 0;
  for (const count of Object.values(counts)) total += count ?? 0;
  return total;
}

/**
 * A count record as text for an operator, largest first: `3 invalid_timestamp, 1 no_host`; an
 * empty string when nothing was counted. Meant for an OTLP `error_message` or a 400 detail.
 */
export function describeCounts(counts: Partial<Record<string, number>>): string {
  return Object.entries(counts)
    .filter((entry): entry is [string, number] => (entry[1] ?? 0) > 0)
    .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
    .map(([reason, count]) => `${count} ${reason}`)
    .join(', ');
}
