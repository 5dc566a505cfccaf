import type { Int64 } from './int64.js';
import { int64ToNumber } from './int64.js';
import type { RemoteWriteHistogram } from './native-histogram.js';
import { defaultMaxHistogramBuckets, histogramFromRemoteWrite } from './native-histogram.js';
import type { SampleCollector } from './sample-collector.js';
import { flattenTags } from './sample-collector.js';

/** A remote-write sample as protobufjs decodes it (1.0 and 2.0 agree on these two fields). */
export type PrometheusSample = { value?: number | null; timestamp?: Int64 | null };

/** A remote-write exemplar: 1.0's, or 2.0's with its label references resolved. */
export type PrometheusExemplar = PrometheusSample & { labels?: readonly PrometheusLabel[] | null };

const scratch = new DataView(new ArrayBuffer(8));

/**
 * Whether `value` is Prometheus' staleness marker, the NaN with bits 0x7ff0000000000002 (any
 * other NaN is an ordinary, non-finite value). protobufjs reads doubles through a typed array,
 * which keeps NaN payloads, and so does this check.
 */
export function isStaleMarker(value: number): boolean {
  if (!Number.isNaN(value)) return false;
  scratch.setFloat64(0, value, true);
  return scratch.getUint32(0, true) === 2 && scratch.getUint32(4, true) === 0x7ff00000;
}

/** Whether `text` from `start` on is a non-empty run of decimal digits. */
function isPort(text: string, start: number): boolean {
  if (start >= text.length) return false;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c < 0x30 || c > 0x39) return false;
  }
  return true;
}

/**
 * `instance` without its `:port`: `node-1:9100` → `node-1`, `[::1]:9100` → `::1`. Anything else
 * (no port, a bare IPv6 address, a URL) is kept as is. Hand-written rather than a regular
 * expression: it runs once per series of every batch.
 */
export function hostOfInstance(instance: string): string {
  if (instance.startsWith('[')) {
    const close = instance.indexOf(']');
    if (close === -1) return instance;
    const rest = close + 1;
    if (rest === instance.length) return instance.slice(1, close);
    if (instance.charCodeAt(rest) === 0x3a /* : */ && isPort(instance, rest + 1)) {
      return instance.slice(1, close);
    }
    return instance;
  }
  const colon = instance.indexOf(':');
  if (colon !== -1 && colon === instance.lastIndexOf(':') && isPort(instance, colon + 1)) {
    return instance.slice(0, colon);
  }
  return instance;
}

/**
 * The service of every remote-written series with none of `host`, `instance` and `job` (one per
 * organization), as a recording rule's or a federated aggregate's series are: Prometheus stores
 * them, so we do too.
 */
const remoteWriteHost = 'remote-write';

/**
 * The service a series of these labels belongs to (docs/api.md#labels-and-values-as-written):
 * its `host` label, else its `instance` label without the port, else its `job` label; undefined
 * without any of them (each caller has its own fallback).
 */
export function hostOfLabels(labels: Readonly<Record<string, string>>): string | undefined {
  const host = labels['host'];
  if (host !== undefined && host !== '') return host;
  const instance = labels['instance'];
  if (instance !== undefined && instance !== '') return hostOfInstance(instance);
  const job = labels['job'];
  return job === undefined || job === '' ? undefined : job;
}

/** A label as protobufjs decodes remote-write 1.0's (2.0's are resolved into the same shape). */
export type PrometheusLabel = { name?: string | null; value?: string | null };

/**
 * Feeds one remote-write series to a collector. The labels are read during the call only (the
 * caller may reuse them), straight from the decoded message: copying them costs a pass per series.
 */
export type PrometheusSeriesCollector = (
  labels: readonly PrometheusLabel[],
  samples: readonly PrometheusSample[],
  exemplars?: readonly PrometheusExemplar[],
  histograms?: readonly RemoteWriteHistogram[],
) => void;

/**
 * Mapping (docs/agents.md#labels-as-written): metric = `__name__`; host = label `host`, else label
 * `instance` without its port, else label `job`, else `remoteWriteHost`; every label but `__name__`
 * is a tag (`job`, `instance` and `host` included), and the tags label the series, nothing added. A
 * label with an empty value is no label, as in Prometheus. A staleness marker ends its series at
 * its time (stored as a marker, not a value), and so does a native histogram whose sum is one; an
 * exemplar goes with its series, at its own time; a native histogram is checked as Prometheus
 * checks one (and against `maxHistogramBuckets`), then goes to the collector's checks as every
 * sample does. One per body: it keeps the hosts of the instances it has seen.
 */
export function createPrometheusSeriesCollector(
  collector: SampleCollector,
  { maxHistogramBuckets = defaultMaxHistogramBuckets }: { maxHistogramBuckets?: number } = {},
): PrometheusSeriesCollector {
  const hostsOfInstances = new Map<string, string>();
  const tags: string[] = [];
  return (labels, samples, exemplars = [], histograms = []) => {
    let metric: string | undefined;
    let hostLabel: string | undefined;
    let instance: string | undefined;
    let job: string | undefined;
    let previous: string | undefined;
    let sorted = true;
    // Overwritten in place: emptying the array would drop its backing store every series.
    let tagCount = 0;
    for (const label of labels) {
      const name = label.name ?? '';
      const value = label.value ?? '';
      if (name === '__name__') {
        metric = value;
        continue;
      }
      if (value === '') continue;
      if (name === 'host') hostLabel = value;
      else if (name === 'instance') instance = value;
      else if (name === 'job') job = value;
      if (previous !== undefined && previous > name) sorted = false;
      previous = name;
      tags[tagCount++] = name;
      tags[tagCount++] = value;
    }
    if (tags.length !== tagCount) tags.length = tagCount;
    // Senders must sort labels; the collector needs them sorted whatever the sender did.
    if (!sorted) {
      const pairs: [string, string][] = [];
      for (let i = 0; i < tags.length; i += 2) pairs.push([tags[i]!, tags[i + 1]!]);
      flattenTags(pairs, tags);
    }
    let host = hostLabel;
    if (host === undefined && instance !== undefined) {
      host = hostsOfInstances.get(instance);
      if (host === undefined) {
        host = hostOfInstance(instance);
        hostsOfInstances.set(instance, host);
      }
    }
    host ??= job ?? remoteWriteHost;
    for (const sample of samples) {
      const value = sample.value ?? 0;
      if (metric === undefined || metric === '') {
        collector.reject('no_metric_name');
      } else if (isStaleMarker(value)) {
        collector.addStale(host, int64ToNumber(sample.timestamp), tags, metric);
      } else {
        collector.add(host, int64ToNumber(sample.timestamp), tags, metric, value);
      }
    }
    for (const exemplar of exemplars) {
      if (metric === undefined || metric === '') {
        collector.reject('no_metric_name');
        continue;
      }
      const pairs: [string, string][] = [];
      for (const label of exemplar.labels ?? []) pairs.push([label.name ?? '', label.value ?? '']);
      const timeMs = int64ToNumber(exemplar.timestamp);
      collector.addExemplar(host, timeMs, tags, metric, exemplar.value ?? 0, pairs);
    }
    for (const message of histograms) {
      const histogram = histogramFromRemoteWrite(message, maxHistogramBuckets);
      const timeMs = int64ToNumber(message.timestamp);
      if (metric === undefined || metric === '') collector.reject('no_metric_name');
      else if ('refused' in histogram) collector.reject('invalid_histogram');
      else if (isStaleMarker(histogram.sum)) collector.addStale(host, timeMs, tags, metric);
      else collector.addHistogram(host, timeMs, tags, metric, histogram);
    }
  };
}
