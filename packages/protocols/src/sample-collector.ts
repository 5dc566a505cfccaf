import {
  checkSampleTime,
  ingestLimits,
  isStorableText,
  maxMetricMagnitude,
} from '@monitor/schemas';
import type {
  DecodeOptions,
  DecodedHostSamples,
  HostSample,
  RejectReason,
  SkipReason,
} from './decoded-host-samples.js';
import type { MetricNameResult } from './metric-name.js';
import { toMetricName } from './metric-name.js';

/** A JavaScript date holds ±8.64e15 ms; PostgreSQL's timestamptz holds less still. */
const maxTimeMs = 8.64e15;

/** A tag set as pairs. */
export type TagPairs = readonly (readonly [key: string, value: string])[];

/**
 * A tag set as the collector takes it: flat (key, value, key, value…), sorted by key. Flat
 * strings straight from the decoded message, so that finding a point's group allocates nothing.
 */
export type FlatTags = readonly string[];

/**
 * The one place where points become host samples: every protocol's decoder feeds it
 * (host, time, tags, name, value) and it applies the /ingest rules, groups, and counts.
 */
export type SampleCollector = {
  /**
   * Takes one point, or counts why not. `tags` is read during this call only (the caller may
   * reuse the array for its next point).
   */
  add(
    host: string | undefined,
    timeMs: number,
    tags: FlatTags,
    metric: string,
    value: number,
  ): void;
  reject(reason: RejectReason, count?: number): void;
  skip(reason: SkipReason, count?: number): void;
  result(): DecodedHostSamples;
};

type Group = { sample: HostSample; size: number; tags: Record<string, string> };

/**
 * The tag sets of one (host, time) as a trie over their flat strings: a lookup compares the
 * strings the decoder already has, where a composite string key would have to be built,
 * flattened and hashed for every point (that cost more than decoding the protobuf).
 */
type TagNode = { next: Map<string, TagNode> | undefined; group: Group | RejectReason | undefined };

/** The groups of one (host, time) and the metric names they already hold. */
type TimeEntry = { tags: TagNode; taken: Set<string> };
type HostEntry = { problem: RejectReason | undefined; times: Map<number, TimeEntry> };

/** Sorted by key (stable, so a repeated key keeps its order). */
function sortTagPairs<T extends readonly [string, string]>(pairs: T[]): T[] {
  return pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

/** Pairs sorted by key, flattened into `into` (emptied first), as `SampleCollector.add` takes. */
export function flattenTags(pairs: [string, string][], into: string[] = []): string[] {
  into.length = 0;
  for (const [key, value] of sortTagPairs(pairs)) into.push(key, value);
  return into;
}

function checkTags(tags: FlatTags): RejectReason | Record<string, string> {
  const record: Record<string, string> = {};
  let count = 0;
  for (let i = 0; i + 1 < tags.length; i += 2) {
    const key = tags[i]!;
    const value = tags[i + 1]!;
    if (key === '' || key === '__proto__') return 'invalid_tag_key';
    if (key.length > ingestLimits.maxTagKeyLength) return 'tag_key_too_long';
    if (value.length > ingestLimits.maxTagValueLength) return 'tag_value_too_long';
    if (!isStorableText(key) || !isStorableText(value)) return 'unstorable_text';
    if (!Object.hasOwn(record, key)) count += 1;
    record[key] = value;
  }
  if (count > ingestLimits.maxTags) return 'too_many_tags';
  return record;
}

function tagNode(root: TagNode, tags: FlatTags): TagNode {
  let node = root;
  for (const text of tags) {
    node.next ??= new Map();
    let child = node.next.get(text);
    if (child === undefined) {
      child = { next: undefined, group: undefined };
      node.next.set(text, child);
    }
    node = child;
  }
  return node;
}

function checkHost(host: string): RejectReason | undefined {
  if (host.length > ingestLimits.maxHostLength) return 'host_too_long';
  if (!isStorableText(host)) return 'unstorable_text';
  return undefined;
}

/**
 * A collector for one body. Checks that depend only on a string (host, metric name) or a tag
 * set are done once per distinct value, which keeps large batches cheap.
 */
export function createSampleCollector(options: DecodeOptions): SampleCollector {
  const samples: HostSample[] = [];
  const rejected: Partial<Record<RejectReason, number>> = {};
  const skipped: Partial<Record<SkipReason, number>> = {};
  let accepted = 0;
  // Nested maps rather than composite string keys: no number-to-string conversion and no
  // hashing of long concatenations per point (they cost more than the protobuf decode did).
  const hosts = new Map<string, HostEntry>();
  const names = new Map<string, MetricNameResult>();
  let lastTimeMs = Number.NaN;
  let lastTimeProblem: RejectReason | undefined;

  function reject(reason: RejectReason, count = 1): void {
    rejected[reason] = (rejected[reason] ?? 0) + count;
  }

  function timeProblem(timeMs: number): RejectReason | undefined {
    if (timeMs === lastTimeMs) return lastTimeProblem;
    let problem: RejectReason | undefined;
    if (!Number.isSafeInteger(timeMs) || Math.abs(timeMs) > maxTimeMs) {
      problem = 'invalid_timestamp';
    } else if (
      options.rawRetentionMs !== undefined &&
      checkSampleTime(timeMs, options.nowMs, options.rawRetentionMs) !== undefined
    ) {
      problem = timeMs > options.nowMs ? 'timestamp_in_future' : 'timestamp_too_old';
    }
    lastTimeMs = timeMs;
    lastTimeProblem = problem;
    return problem;
  }

  function add(
    host: string | undefined,
    timeMs: number,
    tags: FlatTags,
    metric: string,
    value: number,
  ): void {
    if (!Number.isFinite(value)) return reject('non_finite_value');
    if (value > maxMetricMagnitude || value < -maxMetricMagnitude) {
      return reject('value_out_of_range');
    }
    const badTime = timeProblem(timeMs);
    if (badTime !== undefined) return reject(badTime);
    if (host === undefined || host === '') return reject('no_host');
    let entry = hosts.get(host);
    if (entry === undefined) {
      entry = { problem: checkHost(host), times: new Map() };
      hosts.set(host, entry);
    }
    if (entry.problem !== undefined) return reject(entry.problem);
    let name = names.get(metric);
    if (name === undefined) {
      name = toMetricName(metric);
      names.set(metric, name);
    }
    if (!name.ok) return reject(name.reason);

    let at = entry.times.get(timeMs);
    if (at === undefined) {
      at = { tags: { next: undefined, group: undefined }, taken: new Set() };
      entry.times.set(timeMs, at);
    }
    const node = tagNode(at.tags, tags);
    let group = node.group;
    if (group === undefined) {
      const checked = checkTags(tags);
      group =
        typeof checked === 'string'
          ? checked
          : { sample: { host, timeMs, metrics: {}, tags: checked }, size: 0, tags: checked };
      node.group = group;
    }
    if (typeof group === 'string') return reject(group);

    if (at.taken.has(name.name)) return reject('duplicate_host_metric_time');
    at.taken.add(name.name);
    if (group.size === ingestLimits.maxMetricsPerPayload) {
      // /ingest takes at most this many metrics per payload: the rest go in another sample of
      // the same (host, time, tags), which storage keys the same way.
      group.sample = { host, timeMs, metrics: {}, tags: { ...group.tags } };
      group.size = 0;
    }
    // A sample is listed with its first metric: a group whose points all collided stays out.
    if (group.size === 0) samples.push(group.sample);
    group.sample.metrics[name.name] = value;
    group.size += 1;
    accepted += 1;
  }

  return {
    add,
    reject,
    skip(reason, count = 1) {
      skipped[reason] = (skipped[reason] ?? 0) + count;
    },
    result: () => ({ samples, accepted, rejected, skipped }),
  };
}
