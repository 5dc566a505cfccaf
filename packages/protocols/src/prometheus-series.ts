import type { Int64 } from './int64.js';
import { int64ToNumber } from './int64.js';
import type { SampleCollector } from './sample-collector.js';
import { sortTagPairs, tagsKeyOf } from './sample-collector.js';

/** A remote-write sample as protobufjs decodes it (1.0 and 2.0 agree on these two fields). */
export type PrometheusSample = { value?: number | null; timestamp?: Int64 | null };

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

const bracketed = /^\[([^\]]*)\](?::\d+)?$/;
const hostAndPort = /^([^:]*):\d+$/;

/**
 * `instance` without its `:port`: `node-1:9100` → `node-1`, `[::1]:9100` → `::1`. Anything else
 * (no port, a bare IPv6 address, a URL) is kept as is.
 */
export function hostOfInstance(instance: string): string {
  const match = bracketed.exec(instance) ?? hostAndPort.exec(instance);
  return match?.[1] ?? instance;
}

/**
 * Feeds one remote-write series to the collector. `labels` is flat: name, value, name, value…
 * Mapping (CONTRACT "Agent protocols"): metric = `__name__`; host = label `host`, else label
 * `instance` without its port; every label but `__name__` is a tag (`job`, `instance` and
 * `host` included). A label with an empty value is no label, as in Prometheus. Staleness
 * markers are skipped; every other sample goes to the collector's checks.
 */
export function collectPrometheusSeries(
  collector: SampleCollector,
  labels: readonly string[],
  samples: readonly PrometheusSample[],
): void {
  let metric: string | undefined;
  let hostLabel: string | undefined;
  let instance: string | undefined;
  const tags: [string, string][] = [];
  let sorted = true;
  for (let i = 0; i + 1 < labels.length; i += 2) {
    const name = labels[i]!;
    const value = labels[i + 1]!;
    if (name === '__name__') {
      metric = value;
      continue;
    }
    if (value === '') continue;
    if (name === 'host') hostLabel = value;
    else if (name === 'instance') instance = value;
    const previous = tags[tags.length - 1];
    if (previous !== undefined && previous[0] > name) sorted = false;
    tags.push([name, value]);
  }
  // Senders must sort labels; the grouping key needs them sorted whatever the sender did.
  if (!sorted) sortTagPairs(tags);
  const host = hostLabel ?? (instance === undefined ? undefined : hostOfInstance(instance));
  const tagsKey = tagsKeyOf(tags);
  const tagPairs = () => tags;
  for (const sample of samples) {
    const value = sample.value ?? 0;
    if (isStaleMarker(value)) {
      collector.skip('stale_marker');
    } else if (metric === undefined || metric === '') {
      collector.reject('no_metric_name');
    } else {
      collector.add(host, int64ToNumber(sample.timestamp), tagsKey, tagPairs, metric, value);
    }
  }
}
