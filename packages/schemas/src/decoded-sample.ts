/** A snapshot list: parsed values, or a non-empty JSON array as the message carried it. */
export type SnapshotJson = readonly unknown[] | { readonly json: string };

/**
 * A host sample as the writer stores it and the evaluator reads it. Every decoded sample has
 * every field, in this order (the optional ones undefined when absent): one object shape, so
 * the writer's and the evaluator's loops over thousands of them read fields at one place.
 */
export type DecodedSample = {
  orgId: string;
  host: string;
  timeMs: number;
  metrics: Record<string, number>;
  tags: Record<string, string>;
  /** Set when `tags` label the sample's series (the message's `tags_label_series`). */
  tagsLabelSeries?: true;
  /** Metrics whose series ends at `timeMs` (staleness markers); absent when none. */
  staleMetrics?: string[];
  containers: SnapshotJson;
  processes: SnapshotJson;
};
