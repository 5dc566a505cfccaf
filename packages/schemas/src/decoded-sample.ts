import type { NativeHistogram } from './native-histogram.js';

/** A snapshot list: parsed values, or a non-empty JSON array as the message carried it. */
export type SnapshotJson = readonly unknown[] | { readonly json: string };

/**
 * A host sample as the writer stores it and the evaluator reads it: the one shape from the bus
 * record's decoding to storage. Every decoded sample has every field, in this order (the
 * optional ones undefined when absent): one object shape, so the writer's and the evaluator's
 * loops over thousands of them read fields at one place.
 */
export type DecodedSample = {
  orgId: string;
  /** The host name; the service is (orgId, host). */
  host: string;
  /** Sample time, epoch milliseconds. */
  timeMs: number;
  /**
   * Metric name → value, any double: NaN, ±Inf and values beyond ±1e100 (the agent protocols')
   * are stored apart from the aggregated samples.
   */
  metrics: Record<string, number>;
  tags: Record<string, string>;
  /**
   * Set when `tags` are the labels of the sample's series (the agent protocols, the message's
   * `tags_label_series`): each tag set of a metric is a series of its own, stored with those
   * labels. Otherwise (/ingest) the series is the service's metric, labelled by its tags.
   */
  tagsLabelSeries?: true;
  /** Metrics whose series ends at `timeMs` (staleness markers); absent when none. */
  staleMetrics?: string[];
  /** Exemplars of the sample's series at `timeMs`; absent when none. */
  exemplars?: SampleExemplar[];
  /** Metric name → native histogram of its series at `timeMs`; absent when none. */
  histograms?: Record<string, NativeHistogram>;
  /** Stored as JSON in the snapshot of this sample (none when both are empty). */
  containers: SnapshotJson;
  processes: SnapshotJson;
};

/**
 * An exemplar, as Prometheus keeps one: a value of a series (the metric it names, labelled as
 * its sample is) at its sample's time, with labels of its own that point elsewhere (a trace id,
 * most often). Any double, as a sample's value.
 */
export type SampleExemplar = {
  metric: string;
  value: number;
  labels: Record<string, string>;
};

/** Where a sample sits in its source log: the writer's Kafka partition and offset. */
export type SamplePosition = {
  partition: number;
  offset: number;
  /**
   * The partition's log end offset when the sample was read. A stored next offset past it
   * belongs to an earlier log of the same name (a topic created again): storage then starts the
   * partition afresh instead of skipping the new log's records as replays.
   */
  logEndOffset?: number;
};

/**
 * A decoded sample on its way to storage: with its position in the source log, a sample below
 * its partition's stored next offset is skipped as already written. Without one (sources with
 * no durable log, a record written host by host) it is written idempotently by key.
 */
export type PositionedSample = DecodedSample & { position?: SamplePosition };
