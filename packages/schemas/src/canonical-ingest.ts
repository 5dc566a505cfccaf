import type { Container, IngestPayload, Process } from './ingest.js';
import { ingestLimits, ingestPayloadSchema, metricNamePattern } from './ingest.js';
import { isStorableText, maxMetricMagnitude } from './input-policy.js';

/**
 * The payloads of an ingest body (a parsed JSON value) when it is in the shape agents send,
 * checked by hand against the rules of `ingestPayloadSchema`; undefined for anything else, valid
 * or not, which the caller then parses with zod. zod stays the authority: whatever this returns,
 * zod returns too (deep-equal, unknown top-level keys stripped the same way), and whatever zod
 * refuses this never returns, so errors stay zod's (canonical-ingest.test.ts checks both on
 * arbitrary and mutated bodies). It costs a tenth of zod's time on the hot path.
 *
 * What it leaves to zod: containers or processes with fields the schema does not know (zod
 * strips them), text with surrogate pairs is checked by the policy's own pattern, like zod's.
 */
export function readCanonicalIngestBody(value: unknown): IngestPayload[] | undefined {
  if (!Array.isArray(value)) {
    const payload = readPayload(value);
    return payload === undefined ? undefined : [payload];
  }
  if (value.length < 1 || value.length > ingestLimits.maxPayloadsPerRequest) return undefined;
  const payloads: IngestPayload[] = new Array<IngestPayload>(value.length);
  for (let i = 0; i < value.length; i++) {
    const payload = readPayload(value[i]);
    if (payload === undefined) return undefined;
    payloads[i] = payload;
  }
  return payloads;
}

/** zod's own check of the timestamp string: its datetime pattern, nothing written again. */
const timestampSchema = ingestPayloadSchema.shape.timestamp.unwrap();

const payloadKeys = new Set(Object.keys(ingestPayloadSchema.shape));

function readPayload(value: unknown): IngestPayload | undefined {
  if (!isPlainObject(value)) return undefined;
  let onlyKnownKeys = true;
  for (const key in value) {
    if (!payloadKeys.has(key)) {
      onlyKnownKeys = false;
      break;
    }
  }
  const { host, timestamp, metrics, tags, docker_containers: containers, processes } = value;
  if (
    !isText(host, 1, ingestLimits.maxHostLength) ||
    (timestamp !== undefined &&
      (typeof timestamp !== 'string' || !timestampSchema.safeParse(timestamp).success)) ||
    !isMetrics(metrics) ||
    (tags !== undefined && !isTags(tags)) ||
    (containers !== undefined && !isArrayOf(containers, ingestLimits.maxContainers, isContainer)) ||
    (processes !== undefined && !isArrayOf(processes, ingestLimits.maxProcesses, isProcess))
  ) {
    return undefined;
  }
  if (onlyKnownKeys) return value as IngestPayload;
  // Unknown keys are dropped, as zod's object does; the known ones are copied only if present,
  // as zod's output has no key for an absent optional field.
  const payload: IngestPayload = { host, metrics } as IngestPayload;
  if (timestamp !== undefined) payload.timestamp = timestamp;
  if (tags !== undefined) payload.tags = tags as Record<string, string>;
  if (containers !== undefined) payload.docker_containers = containers as Container[];
  if (processes !== undefined) payload.processes = processes as Process[];
  return payload;
}

/** An object with `Object.prototype` (what JSON.parse makes), so no own `__proto__` can hide. */
function isPlainObject(value: unknown): value is Record<string, unknown> {
  return (
    typeof value === 'object' &&
    value !== null &&
    !Array.isArray(value) &&
    Object.getPrototypeOf(value) === Object.prototype
  );
}

function isText(value: unknown, minLength: number, maxLength: number): value is string {
  return (
    typeof value === 'string' &&
    value.length >= minLength &&
    value.length <= maxLength &&
    isStorableText(value)
  );
}

/** zod's records skip an own `__proto__` key after the input policy refused it: refused here. */
const reservedKey = '__proto__';

function isMetrics(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  let count = 0;
  for (const name in value) {
    // The name pattern is ASCII without NUL, so it implies storable text, and refuses __proto__.
    if (!metricNamePattern.test(name)) return false;
    const metric = value[name];
    if (
      typeof metric !== 'number' ||
      !(metric >= -maxMetricMagnitude && metric <= maxMetricMagnitude)
    ) {
      return false;
    }
    count++;
  }
  return count >= 1 && count <= ingestLimits.maxMetricsPerPayload;
}

function isTags(value: unknown): boolean {
  if (!isPlainObject(value)) return false;
  let count = 0;
  for (const key in value) {
    if (key === reservedKey || !isText(key, 1, ingestLimits.maxTagKeyLength)) return false;
    if (!isText(value[key], 0, ingestLimits.maxTagValueLength)) return false;
    count++;
  }
  return count <= ingestLimits.maxTags;
}

function isArrayOf(
  value: unknown,
  maxLength: number,
  isEntry: (entry: unknown) => boolean,
): boolean {
  if (!Array.isArray(value) || value.length > maxLength) return false;
  for (const entry of value as unknown[]) {
    if (!isEntry(entry)) return false;
  }
  return true;
}

const containerKeys = new Set(['name', 'image', 'status', 'cpu_percent', 'memory_usage']);
const processKeys = new Set(['name', 'pid', 'cpu_percent', 'memory_rss']);

/** Only the schema's own keys: zod would strip any other, which this does not imitate. */
function hasOnlyKeys(value: Record<string, unknown>, keys: ReadonlySet<string>): boolean {
  for (const key in value) {
    if (!keys.has(key)) return false;
  }
  return true;
}

function isContainer(value: unknown): boolean {
  if (!isPlainObject(value) || !hasOnlyKeys(value, containerKeys)) return false;
  const { name, image, status, cpu_percent: cpuPercent, memory_usage: memoryUsage } = value;
  return (
    isText(name, 1, ingestLimits.maxSnapshotNameLength) &&
    (image === undefined || isText(image, 0, ingestLimits.maxContainerImageLength)) &&
    (status === undefined || isText(status, 0, ingestLimits.maxContainerStatusLength)) &&
    (cpuPercent === undefined || isPercent(cpuPercent)) &&
    (memoryUsage === undefined || isCount(memoryUsage))
  );
}

function isProcess(value: unknown): boolean {
  if (!isPlainObject(value) || !hasOnlyKeys(value, processKeys)) return false;
  const { name, pid, cpu_percent: cpuPercent, memory_rss: memoryRss } = value;
  return (
    isText(name, 1, ingestLimits.maxSnapshotNameLength) &&
    isCount(pid) &&
    (cpuPercent === undefined || isPercent(cpuPercent)) &&
    (memoryRss === undefined || isCount(memoryRss))
  );
}

function isPercent(value: unknown): boolean {
  return typeof value === 'number' && value >= 0 && Number.isFinite(value);
}

/** zod's `.int()` is a safe integer. */
function isCount(value: unknown): boolean {
  return Number.isSafeInteger(value) && (value as number) >= 0;
}
