import type { Logger } from '@monitor/platform';
import type { SampleMessage } from '@monitor/schemas';

/**
 * Cardinality limits, the classic way to take a metrics service down: labels (tags) per series
 * and their lengths, and how many new series (org, host, metric, and the tags when they label
 * the series) an organization may start per minute. Applied by the gateway to every write,
 * /ingest and the agent protocols alike. Staleness markers start nothing and are never refused
 * on their own.
 */
export type SeriesLimits = {
  maxLabels: number;
  maxLabelNameLength: number;
  maxLabelValueLength: number;
  /** New series per organization per minute; 0 = no limit. */
  maxNewSeriesPerMinute: number;
  /**
   * How many known series the gateway remembers (least recently seen forgotten first; a
   * forgotten series counts as new again when it returns). Bounds the gateway's memory.
   */
  maxTrackedSeries: number;
};

export type SeriesRefusalReason =
  'too_many_labels' | 'label_name_too_long' | 'label_value_too_long' | 'new_series_limit';

export type SeriesPolicyResult = {
  /** The samples to publish, without the points refused: the input itself when none was. */
  kept: readonly SampleMessage[];
  /** Points (metric values) refused, by reason. */
  refused: Partial<Record<SeriesRefusalReason, number>>;
  /** When a new-series refusal will be lifted: the end of the organization's minute. */
  retryAfterSeconds: number;
};

const windowMs = 60_000;

/** The per-process state of the limits; one per gateway. `nowMs` is injected for the tests. */
export function createSeriesPolicy(limits: SeriesLimits, nowMs: () => number) {
  /** Series key → nothing: a Map keeps insertion order, so re-inserting marks it recent. */
  const known = new Map<string, true>();
  const windows = new Map<string, { startMs: number; started: number }>();

  function labelProblem(tags: Record<string, string>): SeriesRefusalReason | undefined {
    const entries = Object.entries(tags);
    if (entries.length > limits.maxLabels) return 'too_many_labels';
    for (const [name, value] of entries) {
      if (name.length > limits.maxLabelNameLength) return 'label_name_too_long';
      if (value.length > limits.maxLabelValueLength) return 'label_value_too_long';
    }
    return undefined;
  }

  function remember(key: string): void {
    known.delete(key);
    known.set(key, true);
    if (known.size > limits.maxTrackedSeries) {
      const oldest = known.keys().next();
      if (oldest.done !== true) known.delete(oldest.value);
    }
  }

  return {
    apply(orgId: string, samples: readonly SampleMessage[]): SeriesPolicyResult {
      const now = nowMs();
      let window = windows.get(orgId);
      if (window === undefined || now - window.startMs >= windowMs) {
        window = { startMs: now, started: 0 };
        windows.set(orgId, window);
      }
      const refused: SeriesPolicyResult['refused'] = {};
      const refuse = (reason: SeriesRefusalReason, count: number): void => {
        refused[reason] = (refused[reason] ?? 0) + count;
      };
      const kept: SampleMessage[] = [];
      for (const sample of samples) {
        const names = Object.keys(sample.metrics);
        const problem = labelProblem(sample.tags);
        if (problem !== undefined) {
          refuse(problem, names.length + (sample.stale_metrics?.length ?? 0));
          continue;
        }
        if (limits.maxNewSeriesPerMinute === 0) {
          kept.push(sample); // no budget: nothing to remember either
          continue;
        }
        let metrics: Record<string, number> | undefined;
        const seriesOf = `${orgId}\u0000${sample.host}\u0000${labelsKey(sample)}`;
        for (const name of names) {
          const key = `${seriesOf}\u0000${name}`;
          const isNew = !known.has(key);
          if (
            isNew &&
            limits.maxNewSeriesPerMinute > 0 &&
            window.started >= limits.maxNewSeriesPerMinute
          ) {
            metrics ??= { ...sample.metrics };
            delete metrics[name];
            refuse('new_series_limit', 1);
            continue;
          }
          if (isNew) window.started++;
          remember(key);
        }
        if (metrics === undefined) kept.push(sample);
        else if (Object.keys(metrics).length > 0 || sample.stale_metrics !== undefined) {
          kept.push({ ...sample, metrics });
        }
      }
      const retryAfterSeconds = Math.max(1, Math.ceil((window.startMs + windowMs - now) / 1000));
      const anyRefused = Object.keys(refused).length > 0;
      return { kept: anyRefused ? kept : samples, refused, retryAfterSeconds };
    },
  };
}

/** The tags of a sample whose tags label its series, as part of a series key; '' otherwise. */
function labelsKey(sample: SampleMessage): string {
  if (sample.tags_label_series !== true) return '';
  return JSON.stringify(Object.entries(sample.tags).sort(([a], [b]) => (a < b ? -1 : 1)));
}

export type SeriesPolicy = ReturnType<typeof createSeriesPolicy>;

/**
 * What the gateway does with a write's messages: applies the policy, counts and logs what it
 * refused, and says whether anything is left to publish. `refusal` is set when nothing is: the
 * caller answers 429 for a spent new-series budget (Retry-After: the end of the minute), its
 * own 4xx for label limits.
 */
export function policeSeries(
  policy: SeriesPolicy,
  deps: {
    metrics: { seriesRefused(reason: SeriesRefusalReason, count: number): void };
    logger: Logger;
  },
  orgId: string,
  messages: readonly SampleMessage[],
): SeriesPolicyResult & { refusal?: { reason: SeriesRefusalReason; detail: string } } {
  const result = policy.apply(orgId, messages);
  const refusals = Object.entries(result.refused) as [SeriesRefusalReason, number][];
  if (refusals.length === 0) return result;
  for (const [reason, count] of refusals) deps.metrics.seriesRefused(reason, count);
  deps.logger.warn({ orgId, refused: result.refused }, 'points refused by the series limits');
  if (result.kept.length > 0) return result;
  const reason =
    result.refused.new_series_limit !== undefined ? 'new_series_limit' : refusals[0]![0];
  const detail =
    reason === 'new_series_limit'
      ? 'The organization started as many new series this minute as the gateway allows (SERIES_MAX_NEW_PER_MINUTE).'
      : `Every sample broke a label limit: ${refusals.map(([r, n]) => `${n} ${r}`).join(', ')}.`;
  return { ...result, refusal: { reason, detail } };
}
