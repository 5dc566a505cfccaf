import type { NativeHistogram } from '@monitor/schemas';
import { checkSampleTime, ingestLimits, isStorableText } from '@monitor/schemas';
import type {
  DecodeOptions,
  DecodedHostSamples,
  ProtocolSample,
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
   * Takes one point, or counts why not; any value (NaN and ±Inf too: a staleness marker goes to
   * `addStale`). `tags` is read during this call only (the caller may reuse the array for its
   * next point).
   */
  add(
    host: string | undefined,
    timeMs: number,
    tags: FlatTags,
    metric: string,
    value: number,
  ): void;
  /**
   * Takes one staleness marker: the series (host, tags, metric) ends at `timeMs`. Checked and
   * grouped as `add` checks and groups a value.
   */
  addStale(host: string | undefined, timeMs: number, tags: FlatTags, metric: string): void;
  /**
   * Takes one exemplar of the series (host, tags, metric) at `timeMs`, checked and grouped as
   * `add` checks and groups a value (a series may have a value and an exemplar at one time);
   * its `labels` as pairs, read during this call only.
   */
  addExemplar(
    host: string | undefined,
    timeMs: number,
    tags: FlatTags,
    metric: string,
    value: number,
    labels: TagPairs,
  ): void;
  /**
   * Takes one native histogram of the series (host, tags, metric) at `timeMs`, checked and
   * grouped as `add` checks and groups a value: a series has a value or a histogram at a time.
   */
  addHistogram(
    host: string | undefined,
    timeMs: number,
    tags: FlatTags,
    metric: string,
    histogram: NativeHistogram,
  ): void;
  reject(reason: RejectReason, count?: number): void;
  skip(reason: SkipReason, count?: number): void;
  result(): DecodedHostSamples;
};

/**
 * The points of one (host, time, tag set): its current sample, how many entries that holds, and
 * the metric names taken (one point per series and time). Until the group has a staleness marker
 * or has been split, the names taken are exactly its sample's metrics, and those are the check:
 * a set of its own for every group would cost more than the rest of the group.
 */
type Group = {
  sample: ProtocolSample;
  size: number;
  tags: Record<string, string>;
  /** Every name taken, once the sample's metrics no longer hold them all; else undefined. */
  taken: Set<string> | undefined;
};

/** Whether `name` is taken in the group already. */
function isTaken(group: Group, name: string): boolean {
  return group.taken === undefined
    ? Object.hasOwn(group.sample.metrics, name)
    : group.taken.has(name);
}

/**
 * The tag sets of one (host, time) as a trie over their flat strings: a lookup compares the
 * strings the decoder already has, where a composite string key would have to be built,
 * flattened and hashed for every point (that cost more than decoding the protobuf).
 */
type TagNode = { next: Map<string, TagNode> | undefined; group: Group | RejectReason | undefined };

/**
 * A host's checks and tag sets, with the node its last point went to: a sender writes a
 * target's series with the same tag set again and again, and comparing the strings of that set
 * costs less than hashing each of them again to walk the trie.
 */
type HostEntry = {
  problem: RejectReason | undefined;
  times: Map<number, TagNode>;
  lastTimeMs: number;
  /** A copy of the flat tags of the host's last point (the caller reuses its array). */
  lastTags: string[];
  lastNode: TagNode | undefined;
};

function sameTags(a: FlatTags, b: FlatTags): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
  return true;
}

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

/**
 * Prometheus' bound on an exemplar's labels (`ExemplarMaxLabelSetLength`): their names' and
 * values' characters in all, counted in code points as it counts runes.
 */
export const exemplarLabelsMaxLength = 128;

/** The code points of labels' names and values, as Prometheus measures an exemplar's. */
export function labelsLength(labels: TagPairs): number {
  let length = 0;
  for (const [name, value] of labels) length += [...name].length + [...value].length;
  return length;
}

/**
 * An exemplar's labels as a record, or undefined when Prometheus would refuse them (longer than
 * its bound, counted in code points as it counts runes) or storage cannot hold them. A label
 * with an empty name or value is none: Prometheus drops those before it checks the length.
 */
function exemplarLabels(pairs: TagPairs): Record<string, string> | undefined {
  const kept = pairs.filter(([name, value]) => name !== '' && value !== '' && name !== '__proto__');
  if (kept.some(([name, value]) => !isStorableText(name) || !isStorableText(value))) {
    return undefined;
  }
  if (labelsLength(kept) > exemplarLabelsMaxLength) return undefined;
  return Object.fromEntries(kept);
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
  const samples: ProtocolSample[] = [];
  const rejected: Partial<Record<RejectReason, number>> = {};
  const skipped: Partial<Record<SkipReason, number>> = {};
  let accepted = 0;
  let exemplars = 0;
  let histograms = 0;
  // Nested maps rather than composite string keys: no number-to-string conversion and no
  // hashing of long concatenations per point (they cost more than the protobuf decode did).
  const hosts = new Map<string, HostEntry>();
  const names = new Map<string, MetricNameResult>();
  let lastTimeMs = Number.NaN;
  let lastTimeProblem: RejectReason | undefined;

  function reject(reason: RejectReason, count = 1): void {
    rejected[reason] = (rejected[reason] ?? 0) + count;
  }

  /** Counts the point as rejected; undefined, for `groupOf` to return. */
  function refuse(reason: RejectReason): undefined {
    reject(reason);
    return undefined;
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

  /** The stored name of the metric of the point `groupOf` last took. */
  let takenName = '';

  /**
   * Takes a point of (host, time, tags, metric): the group it belongs to, its metric's stored
   * name in `takenName` (no object per point: this runs for every point of every body);
   * undefined after counting why the point cannot be taken. `kind`: a value, a staleness marker
   * (its name goes to the sample's `staleMetrics`, not its metrics) or an exemplar (beside the
   * series' points: it takes no name).
   */
  function groupOf(
    host: string | undefined,
    timeMs: number,
    tags: FlatTags,
    metric: string,
    kind: 'value' | 'stale' | 'exemplar' | 'histogram',
  ): Group | undefined {
    const badTime = timeProblem(timeMs);
    if (badTime !== undefined) return refuse(badTime);
    if (host === undefined || host === '') return refuse('no_host');
    let entry = hosts.get(host);
    if (entry === undefined) {
      entry = {
        problem: checkHost(host),
        times: new Map(),
        lastTimeMs: Number.NaN,
        lastTags: [],
        lastNode: undefined,
      };
      hosts.set(host, entry);
    }
    if (entry.problem !== undefined) return refuse(entry.problem);
    let name = names.get(metric);
    if (name === undefined) {
      name = toMetricName(metric);
      names.set(metric, name);
    }
    if (!name.ok) return refuse(name.reason);

    let node = entry.lastNode;
    if (node === undefined || entry.lastTimeMs !== timeMs || !sameTags(entry.lastTags, tags)) {
      let root = entry.times.get(timeMs);
      if (root === undefined) {
        root = { next: undefined, group: undefined };
        entry.times.set(timeMs, root);
      }
      node = tagNode(root, tags);
      entry.lastTimeMs = timeMs;
      const last = entry.lastTags;
      for (let i = 0; i < tags.length; i++) last[i] = tags[i]!;
      if (last.length !== tags.length) last.length = tags.length;
      entry.lastNode = node;
    }
    let group = node.group;
    if (group === undefined) {
      const checked = checkTags(tags);
      group =
        typeof checked === 'string'
          ? checked
          : {
              sample: { host, timeMs, metrics: {}, tags: checked },
              size: 0,
              tags: checked,
              taken: undefined,
            };
      node.group = group;
    }
    if (typeof group === 'string') return refuse(group);

    if (kind !== 'exemplar') {
      if (isTaken(group, name.name)) return refuse('duplicate_series_time');
      if (group.taken !== undefined) group.taken.add(name.name);
      else if (kind !== 'value' || group.size === ingestLimits.maxMetricsPerPayload) {
        // From here on the sample's metrics no longer hold every name taken.
        group.taken = new Set(Object.keys(group.sample.metrics));
        group.taken.add(name.name);
      }
    } else if (group.size === ingestLimits.maxMetricsPerPayload && group.taken === undefined) {
      // The split below starts a sample whose metrics hold none of the names taken.
      group.taken = new Set(Object.keys(group.sample.metrics));
    }
    if (group.size === ingestLimits.maxMetricsPerPayload) {
      // /ingest takes at most this many metrics per payload: the rest go in another sample of
      // the same (host, time, tags), which storage keys the same way.
      group.sample = { host, timeMs, metrics: {}, tags: { ...group.tags } };
      group.size = 0;
    }
    // A sample is listed with its first point (a split one too).
    if (group.size === 0) samples.push(group.sample);
    group.size += 1;
    if (kind === 'exemplar') exemplars += 1;
    else if (kind === 'histogram') histograms += 1;
    else accepted += 1;
    takenName = name.name;
    return group;
  }

  function add(
    host: string | undefined,
    timeMs: number,
    tags: FlatTags,
    metric: string,
    value: number,
  ): void {
    // Every value is taken, NaN and ±Inf included (docs/api.md#labels-and-values-as-written):
    // /ingest's ±1e100 bound is not the agents'. Storage keeps what its aggregates cannot hold
    // apart from them.
    const group = groupOf(host, timeMs, tags, metric, 'value');
    if (group !== undefined) group.sample.metrics[takenName] = value;
  }

  function addStale(host: string | undefined, timeMs: number, tags: FlatTags, metric: string) {
    const group = groupOf(host, timeMs, tags, metric, 'stale');
    if (group !== undefined) (group.sample.staleMetrics ??= []).push(takenName);
  }

  function addExemplar(
    host: string | undefined,
    timeMs: number,
    tags: FlatTags,
    metric: string,
    value: number,
    labelPairs: TagPairs,
  ): void {
    const labels = exemplarLabels(labelPairs);
    if (labels === undefined) {
      reject('invalid_exemplar');
      return;
    }
    const group = groupOf(host, timeMs, tags, metric, 'exemplar');
    if (group !== undefined) {
      (group.sample.exemplars ??= []).push({ metric: takenName, value, labels });
    }
  }

  function addHistogram(
    host: string | undefined,
    timeMs: number,
    tags: FlatTags,
    metric: string,
    histogram: NativeHistogram,
  ): void {
    const group = groupOf(host, timeMs, tags, metric, 'histogram');
    if (group !== undefined) (group.sample.histograms ??= {})[takenName] = histogram;
  }

  return {
    add,
    addStale,
    addExemplar,
    addHistogram,
    reject,
    skip(reason, count = 1) {
      skipped[reason] = (skipped[reason] ?? 0) + count;
    },
    result: () => ({ samples, accepted, exemplars, histograms, rejected, skipped }),
  };
}
