import type { PositionedSample, SnapshotJson } from '@monitor/schemas';
import { rollupValueBound } from '../storage/rollups.js';

/**
 * A snapshot's list: values to serialize, or a non-empty JSON array as text, stored as it is
 * (the writer passes its message's slice on rather than parse and serialize it again). Text
 * that is not valid JSON fails the write permanently.
 */
export type SnapshotList = SnapshotJson;

/** One decoded host sample, as the writer hands it to storage: the schemas' shape. */
export type HostSample = PositionedSample;

export type SampleBatch = {
  /** Host samples, each partition's in offset order. */
  samples: readonly HostSample[];
  /**
   * Next offsets to record beyond those of `samples`, e.g. after records of a partition that
   * were dead-lettered, so a replay skips them too.
   */
  offsets?: readonly { partition: number; nextOffset: number }[];
};

/** A storage error caused by the batch's content: permanent, the writer dead-letters it. */
export class InvalidSampleError extends Error {
  override readonly name = 'InvalidSampleError';
}

/** The services projection update for one (org, host), merged over a batch. */
export type ServiceSummary = {
  orgId: string;
  name: string;
  /** Time of the newest sample (epoch ms). */
  lastSeenMs: number;
  /** Tags of the newest sample. */
  tags: Readonly<Record<string, string>>;
  /** Latest value per metric in the batch, and its sample time (epoch ms). */
  metrics: Map<string, { value: number; timeMs: number }>;
};

/**
 * A map keyed by service, (org, host name). Two levels rather than one joined key: a joined key
 * is a new string to build, flatten and hash on every lookup, while a sample's own org and host
 * strings are hashed once (V8 keeps a string's hash) however often a batch looks them up.
 */
export class ServiceMap<T> {
  readonly #byOrg = new Map<string, Map<string, T>>();

  get(orgId: string, name: string): T | undefined {
    return this.#byOrg.get(orgId)?.get(name);
  }

  has(orgId: string, name: string): boolean {
    return this.#byOrg.get(orgId)?.has(name) === true;
  }

  set(orgId: string, name: string, value: T): void {
    let names = this.#byOrg.get(orgId);
    if (names === undefined) {
      names = new Map();
      this.#byOrg.set(orgId, names);
    }
    names.set(name, value);
  }

  *values(): Generator<T> {
    for (const names of this.#byOrg.values()) yield* names.values();
  }
}

/**
 * The next offset to store per partition: one past the highest offset in the batch, or an
 * explicit `offsets` entry when that is higher.
 */
export function nextOffsets(batch: SampleBatch): Map<number, number> {
  const next = new Map<number, number>();
  const raise = (partition: number, nextOffset: number): void => {
    if (!Number.isSafeInteger(partition) || partition < 0) {
      throw new RangeError(`partition must be a non-negative integer, got ${partition}`);
    }
    if (!Number.isSafeInteger(nextOffset) || nextOffset < 0) {
      throw new RangeError(`offset must be a non-negative integer, got ${nextOffset - 1}`);
    }
    next.set(partition, Math.max(next.get(partition) ?? 0, nextOffset));
  };
  for (const sample of batch.samples) {
    if (sample.position !== undefined) raise(sample.position.partition, sample.position.offset + 1);
  }
  for (const { partition, nextOffset } of batch.offsets ?? []) raise(partition, nextOffset);
  return next;
}

/**
 * The partitions whose stored next offset is past every offset their log has now (the highest
 * log end offset a sample of the batch saw): their stored offset belongs to an earlier log.
 */
export function partitionsRestarted(
  samples: readonly HostSample[],
  storedNextOffsets: ReadonlyMap<number, number>,
): Set<number> {
  const logEnds = new Map<number, number>();
  for (const { position } of samples) {
    if (position?.logEndOffset === undefined) continue;
    const { partition, logEndOffset } = position;
    logEnds.set(partition, Math.max(logEnds.get(partition) ?? 0, logEndOffset));
  }
  const restarted = new Set<number>();
  for (const [partition, logEnd] of logEnds) {
    if ((storedNextOffsets.get(partition) ?? 0) > logEnd) restarted.add(partition);
  }
  return restarted;
}

/** Drops the samples whose offset is below their partition's stored next offset. */
export function skipWritten(
  samples: readonly HostSample[],
  storedNextOffsets: ReadonlyMap<number, number>,
): { fresh: HostSample[]; skipped: number } {
  if (storedNextOffsets.size === 0) return { fresh: [...samples], skipped: 0 };
  const fresh = samples.filter(
    (sample) =>
      sample.position === undefined ||
      sample.position.offset >= (storedNextOffsets.get(sample.position.partition) ?? 0),
  );
  return { fresh, skipped: samples.length - fresh.length };
}

/**
 * Merges a batch into one summary per service (`skipInvalid`: leaving out, rather than
 * throwing on, samples storage cannot take: those a replay carries that were set aside), ordered by (orgId, name), the order the upsert
 * locks rows in. Within the batch the newest sample wins; between equal times the later one.
 * A sample without metrics (staleness markers only) is no sign of life: it is left out.
 * Throws InvalidSampleError on a sample that storage cannot take.
 */
export function summarizeServices(
  samples: readonly HostSample[],
  options: { skipInvalid?: boolean } = {},
): ServiceSummary[] {
  const summaries = new ServiceMap<ServiceSummary>();
  for (const sample of samples) {
    if (options.skipInvalid === true) {
      if (!isStorable(sample)) continue;
    } else checkSample(sample);
    if (!hasMetrics(sample)) continue;
    let summary = summaries.get(sample.orgId, sample.host);
    if (summary === undefined) {
      summary = {
        orgId: sample.orgId,
        name: sample.host,
        lastSeenMs: sample.timeMs,
        tags: sample.tags,
        metrics: new Map(),
      };
      summaries.set(sample.orgId, sample.host, summary);
    } else if (sample.timeMs >= summary.lastSeenMs) {
      summary.lastSeenMs = sample.timeMs;
      summary.tags = sample.tags;
    }
    const { metrics } = sample;
    for (const metric in metrics) {
      // A service's latest metrics are JSON, which holds no NaN or ±Inf: it shows the latest
      // finite value (PromQL reads every stored one).
      if (!Number.isFinite(metrics[metric])) continue;
      const latest = summary.metrics.get(metric);
      if (latest === undefined || sample.timeMs >= latest.timeMs) {
        summary.metrics.set(metric, { value: metrics[metric] as number, timeMs: sample.timeMs });
      }
    }
  }
  return [...summaries.values()].sort(
    (a, b) => compareStrings(a.orgId, b.orgId) || compareStrings(a.name, b.name),
  );
}

/**
 * Whether the sample holds a value or a histogram (one may hold staleness markers or exemplars
 * only): a sign of its host's life.
 */
export function hasMetrics(sample: HostSample): boolean {
  for (const metric in sample.metrics) if (Object.hasOwn(sample.metrics, metric)) return true;
  const { histograms } = sample;
  if (histograms === undefined) return false;
  for (const metric in histograms) if (Object.hasOwn(histograms, metric)) return true;
  return false;
}

function isStorable(sample: HostSample): boolean {
  try {
    checkSample(sample);
    return true;
  } catch {
    return false;
  }
}

/** The most milliseconds from the epoch, either way, that a Date (and so storage) holds. */
const maxDateMs = 8.64e15;

/**
 * Throws InvalidSampleError on a sample storage cannot take: its time. Every value is storable
 * (see `isAggregatable` for where).
 */
export function checkSample(sample: HostSample): void {
  if (!Number.isSafeInteger(sample.timeMs) || Math.abs(sample.timeMs) > maxDateMs) {
    throw new InvalidSampleError(`sample time ${sample.timeMs} is not a valid epoch-ms time`);
  }
}

/**
 * Whether a value goes into `samples`, whose buckets (the history's minutes and hours, the kept
 * tiers) sum, average and compare it: a finite value within /ingest's ±1e100 (rollupValueBound), so no sum of them
 * can overflow and no NaN poisons a bucket. Any other value (NaN, ±Inf, a larger magnitude, as
 * the agent protocols may send) goes into `unaggregated_samples`, which PromQL and remote read
 * merge in and the aggregates and rules never see.
 */
export function isAggregatable(value: number): boolean {
  return value >= -rollupValueBound && value <= rollupValueBound;
}

/** Code-unit order, the same for every process (localeCompare is not). */
function compareStrings(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
