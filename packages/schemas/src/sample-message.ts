import { z } from 'zod';
import type { NativeHistogram } from './native-histogram.js';
import { containerMessageSchema, processMessageSchema } from './ingest.js';
import { metricsToJson, metricValueFromJson, specialValueNames } from './metric-value-json.js';
import { maxHostNameLength } from './host-name.js';
import { decodeHistogram, encodeHistogram, HistogramChunkError } from './histogram-chunk.js';

/** A value as the message's JSON carries it: a number, or a special value's spelling. */
const metricValueSchema = z.union([
  z.number(),
  z.enum(specialValueNames).transform((name) => metricValueFromJson(name) as number),
]);

/**
 * One host sample on the `metrics.samples.v1` topic, keyed `org_id:host` so a host's samples stay
 * in one partition, in order. `v` is a literal: a consumer rejects versions it does not know.
 * The edge's input policy is applied by the gateway before publishing, not here: the writer's
 * fast decoder mirrors this schema exactly.
 */
const sampleMessageSchema = z.object({
  v: z.literal(1),
  org_id: z.string().min(1),
  host: z.string().min(1).max(maxHostNameLength),
  /** Sample time, epoch milliseconds (the agent's timestamp, or receipt time without one). */
  time_ms: z.number().int(),
  received_ms: z.number().int(),
  /** Values JSON numbers cannot carry (NaN, ±Inf, −0) are strings: see metric-value-json.ts. */
  metrics: z.record(z.string(), metricValueSchema),
  tags: z.record(z.string(), z.string()),
  /**
   * Present (only ever `true`) when `tags` are the labels of this sample's series, as the agent
   * protocols write them: each distinct tag set of a metric is a series of its own. Absent
   * (/ingest, and every writer before this field): the series is the host's metric, labelled by
   * its service's tags. Optional, so records and writers without it keep their meaning.
   */
  tags_label_series: z.literal(true).optional(),
  /**
   * Metrics whose series (this host, these tags) ends at `time_ms`: Prometheus staleness
   * markers, stored as such, never as values. Absent when there are none.
   */
  stale_metrics: z.array(z.string()).optional(),
  /**
   * Exemplars of this host's series (these tags, the metric each names) at `time_ms`, as the
   * agent protocols carry them. Absent when there are none; a message may carry only these.
   */
  exemplars: z
    .array(
      z.object({
        metric: z.string(),
        value: metricValueSchema,
        labels: z.record(z.string(), z.string()),
      }),
    )
    .optional(),
  /**
   * Native histograms of this host's series (these tags, the metric each is keyed by) at
   * `time_ms`, each as base64 of its bytes in our histogram layout (histogram-chunk.ts). Absent
   * when there are none. A metric is a value or a histogram at one time, never both.
   */
  histograms: z.record(z.string(), z.string().transform(histogramFromBase64)).optional(),
  containers: z.array(containerMessageSchema),
  processes: z.array(processMessageSchema),
});
export type SampleMessage = z.infer<typeof sampleMessageSchema>;

/** A histogram from the base64 of its bytes, as a message's JSON carries it. */
function histogramFromBase64(text: string, context: z.RefinementCtx): NativeHistogram {
  try {
    return decodeHistogram(Buffer.from(text, 'base64'));
  } catch (err) {
    if (!(err instanceof HistogramChunkError)) throw err;
    context.addIssue({ code: 'custom', message: `not a histogram: ${err.message}` });
    return z.NEVER;
  }
}

export function sampleMessageKey(message: Pick<SampleMessage, 'org_id' | 'host'>): string {
  return `${message.org_id}:${message.host}`;
}

export function encodeSampleMessage(message: SampleMessage): Buffer {
  const metrics = metricsToJson(message.metrics);
  const exemplars = message.exemplars?.map((exemplar) => ({
    ...exemplar,
    value: metricsToJson({ value: exemplar.value })['value'],
  }));
  const histograms =
    message.histograms === undefined
      ? undefined
      : Object.fromEntries(
          Object.entries(message.histograms).map(([metric, histogram]) => [
            metric,
            Buffer.from(encodeHistogram(histogram)).toString('base64'),
          ]),
        );
  return Buffer.from(
    JSON.stringify(
      metrics === message.metrics && exemplars === undefined && histograms === undefined
        ? message
        : {
            ...message,
            metrics,
            ...(exemplars === undefined ? {} : { exemplars }),
            ...(histograms === undefined ? {} : { histograms }),
          },
    ),
  );
}

export type DecodeResult<T> = { ok: true; value: T } | { ok: false; reason: string };

/** Pure: the message, or why it cannot be one (dead-letter material, never retried). */
export function decodeSampleMessage(value: Buffer | null): DecodeResult<SampleMessage> {
  if (value === null) return { ok: false, reason: 'empty message value' };
  let json: unknown;
  try {
    json = JSON.parse(value.toString('utf8'));
  } catch {
    return { ok: false, reason: 'message value is not JSON' };
  }
  const parsed = sampleMessageSchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return {
      ok: false,
      reason:
        `invalid sample message: ${issue?.path.join('.') ?? ''} ${issue?.message ?? ''}`.trim(),
    };
  }
  return { ok: true, value: parsed.data };
}
