import { z } from 'zod';
import {
  keyNamesDocument,
  metricValueSchema,
  storableRecord,
  storableText,
} from './input-policy.js';
import { maxHostNameLength } from './host-name.js';

/** The route agents POST samples to: the gateway serves it, the OpenAPI document describes it. */
export const ingestPath = '/api/v1/ingest';

/** Limits of POST /api/v1/ingest, as the API contract states them. */
export const ingestLimits = {
  maxPayloadsPerRequest: 1000,
  maxHostLength: maxHostNameLength,
  maxMetricsPerPayload: 500,
  maxTags: 64,
  maxTagKeyLength: 64,
  maxTagValueLength: 256,
  maxContainers: 1000,
  maxProcesses: 5000,
  /** A container's or a process's name, in a payload's snapshot of them. */
  maxSnapshotNameLength: 255,
  maxContainerImageLength: 1024,
  maxContainerStatusLength: 64,
  maxFutureSkewMs: 10 * 60 * 1000,
} as const;

/** `__proto__` is excluded: no record can hold it (see `reservedKey` in input-policy.ts). */
export const metricNamePattern = /^(?!__proto__$)[A-Za-z_][A-Za-z0-9_.:-]{0,127}$/;

const metricNameMessage = 'must match ^[A-Za-z_][A-Za-z0-9_.:-]{0,127}$ (and not be __proto__)';

const nonNegativeInt = z.number().int().nonnegative();
const percent = z.number().nonnegative().finite();

/** Its free-text fields with `text` applied: the input policy at the edge, nothing on the bus. */
function containerSchemaOf(text: (schema: z.ZodString) => z.ZodString) {
  return z.object({
    name: text(z.string().min(1).max(ingestLimits.maxSnapshotNameLength)),
    image: text(z.string().max(ingestLimits.maxContainerImageLength)).optional(),
    status: text(z.string().max(ingestLimits.maxContainerStatusLength)).optional(),
    cpu_percent: percent.optional(),
    memory_usage: nonNegativeInt.optional(),
  });
}

function processSchemaOf(text: (schema: z.ZodString) => z.ZodString) {
  return z.object({
    name: text(z.string().min(1).max(ingestLimits.maxSnapshotNameLength)),
    pid: nonNegativeInt,
    cpu_percent: percent.optional(),
    memory_rss: nonNegativeInt.optional(),
  });
}

const asIs = (schema: z.ZodString) => schema;

/** A container as agents send it and the API returns it (the input policy applies). */
export const containerSchema = containerSchemaOf(storableText);
export type Container = z.infer<typeof containerSchema>;

/** A process as agents send it and the API returns it (the input policy applies). */
export const processSchema = processSchemaOf(storableText);
export type Process = z.infer<typeof processSchema>;

/**
 * The same on the samples topic, where the writer's hand-written decoder must accept exactly
 * what the schema does: the gateway applied the policy before publishing, so the bus format
 * stays as it was (what reaches storage unchecked is the writer's concern, not this schema's).
 */
export const containerMessageSchema = containerSchemaOf(asIs);
export const processMessageSchema = processSchemaOf(asIs);

const metricsCountMessage = `must have 1 to ${ingestLimits.maxMetricsPerPayload} entries`;

const metricsSchema = storableRecord(
  z.string().regex(metricNamePattern, { error: metricNameMessage }),
  metricValueSchema(),
)
  .superRefine((metrics, ctx) => {
    const count = Object.keys(metrics).length;
    if (count < 1 || count > ingestLimits.maxMetricsPerPayload) {
      ctx.addIssue({ code: 'custom', message: `${metricsCountMessage}, got ${count}` });
    }
  })
  .meta({
    minProperties: 1,
    maxProperties: ingestLimits.maxMetricsPerPayload,
    propertyNames: { type: 'string', pattern: metricNamePattern.source },
    description:
      `Metric name → value: 1 to ${ingestLimits.maxMetricsPerPayload} entries; values are ` +
      'finite numbers from -1e100 to 1e100 (beyond that, aggregates could overflow).',
  });

const tagKeyMessage = `must be 1 to ${ingestLimits.maxTagKeyLength} characters`;
const tagValueMessage = `must be at most ${ingestLimits.maxTagValueLength} characters`;

const tagsSchema = storableRecord(
  z
    .string()
    .min(1, { error: tagKeyMessage })
    .max(ingestLimits.maxTagKeyLength, { error: tagKeyMessage }),
  storableText(
    z.string({ error: 'must be a string' }).max(ingestLimits.maxTagValueLength, {
      error: tagValueMessage,
    }),
  ),
)
  .refine((tags) => Object.keys(tags).length <= ingestLimits.maxTags, {
    message: `at most ${ingestLimits.maxTags} tags`,
  })
  .meta({
    maxProperties: ingestLimits.maxTags,
    propertyNames: keyNamesDocument({ minLength: 1, maxLength: ingestLimits.maxTagKeyLength }),
  });

/**
 * One host sample as an agent sends it. Unknown top-level fields are dropped (agents evolve);
 * the sample-time window is checked separately by `checkSampleTime`, which needs a clock.
 */
export const ingestPayloadSchema = z.object({
  host: storableText(z.string().min(1).max(ingestLimits.maxHostLength)),
  timestamp: z.iso.datetime({ offset: true }).optional(),
  metrics: metricsSchema,
  tags: tagsSchema.optional(),
  docker_containers: z.array(containerSchema).max(ingestLimits.maxContainers).optional(),
  processes: z.array(processSchema).max(ingestLimits.maxProcesses).optional(),
});
export type IngestPayload = z.infer<typeof ingestPayloadSchema>;

export const ingestResponseSchema = z.object({
  status: z.literal('ok'),
  events_accepted: z.number().int().nonnegative(),
});

/**
 * Rejects samples stamped more than 10 minutes in the future or older than raw retention: such
 * samples could never be queried, and accepting them would only hide an agent's clock problem.
 */
export function checkSampleTime(
  timestampMs: number,
  nowMs: number,
  rawRetentionMs: number,
): string | undefined {
  if (timestampMs > nowMs + ingestLimits.maxFutureSkewMs) {
    return 'timestamp is more than 10 minutes in the future';
  }
  if (timestampMs < nowMs - rawRetentionMs) {
    return `timestamp is older than the raw retention of ${Math.round(rawRetentionMs / 86_400_000)} days`;
  }
  return undefined;
}
