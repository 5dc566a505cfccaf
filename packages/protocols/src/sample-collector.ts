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

/** A tag set as the protocols hand it over: pairs sorted by key. */
export type TagPairs = readonly (readonly [key: string, value: string])[];

/**
 * The one place where points become host samples: every protocol's decoder feeds it
 * (host, time, tags, name, value) and it applies the /ingest rules, groups, and counts.
 */
export type SampleCollector = {
  /**
   * Takes one point, or counts why not. `tagsKey` identifies the tag set (see `tagsKeyOf`);
   * `tags` builds it, called only for the first point of a (host, time, tag set).
   */
  add(
    host: string | undefined,
    timeMs: number,
    tagsKey: string,
    tags: () => TagPairs,
    metric: string,
    value: number,
  ): void;
  reject(reason: RejectReason, count?: number): void;
  skip(reason: SkipReason, count?: number): void;
  result(): DecodedHostSamples;
};

type Group = { sample: HostSample; size: number; tags: Record<string, string> };

/**
 * An unambiguous key of a sorted tag set: each string is length-prefixed, so no key or value
 * (NUL included, checked only later) can make two different sets collide.
 */
export function tagsKeyOf(tags: TagPairs): string {
  let key = '';
  for (const [name, value] of tags) key += `${name.length}:${name}${value.length}:${value}`;
  return key;
}

/** Sorted by key, as `tagsKeyOf` wants them (stable, so a repeated key keeps its order). */
export function sortTagPairs<T extends readonly [string, string]>(pairs: T[]): T[] {
  return pairs.sort((a, b) => (a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : 0));
}

function checkTags(pairs: TagPairs): RejectReason | Record<string, string> {
  const tags: Record<string, string> = {};
  let count = 0;
  for (const [key, value] of pairs) {
    if (key === '' || key === '__proto__') return 'invalid_tag_key';
    if (key.length > ingestLimits.maxTagKeyLength) return 'tag_key_too_long';
    if (value.length > ingestLimits.maxTagValueLength) return 'tag_value_too_long';
    if (!isStorableText(key) || !isStorableText(value)) return 'unstorable_text';
    if (!Object.hasOwn(tags, key)) count += 1;
    tags[key] = value;
  }
  if (count > ingestLimits.maxTags) return 'too_many_tags';
  return tags;
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
  const hosts = new Map<string, RejectReason | undefined>();
  const names = new Map<string, MetricNameResult>();
  const groups = new Map<string, Group | RejectReason>();
  const taken = new Set<string>();
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
    tagsKey: string,
    tags: () => TagPairs,
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
    let badHost = hosts.get(host);
    if (badHost === undefined && !hosts.has(host)) {
      badHost = checkHost(host);
      hosts.set(host, badHost);
    }
    if (badHost !== undefined) return reject(badHost);
    let name = names.get(metric);
    if (name === undefined) {
      name = toMetricName(metric);
      names.set(metric, name);
    }
    if (!name.ok) return reject(name.reason);

    // Neither the host (checked above) nor a metric name contains NUL: the keys are unambiguous.
    const groupKey = `${host}\u0000${timeMs}\u0000${tagsKey}`;
    let group = groups.get(groupKey);
    if (group === undefined) {
      const checked = checkTags(tags());
      group =
        typeof checked === 'string'
          ? checked
          : { sample: { host, timeMs, metrics: {}, tags: checked }, size: 0, tags: checked };
      groups.set(groupKey, group);
    }
    if (typeof group === 'string') return reject(group);

    const takenKey = `${host}\u0000${timeMs}\u0000${name.name}`;
    if (taken.has(takenKey)) return reject('duplicate_host_metric_time');
    taken.add(takenKey);
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
