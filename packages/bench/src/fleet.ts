/**
 * A simulated agent fleet whose request bodies cost the load generator almost nothing: every
 * host's payload is serialized once, and each request only copies those bytes into a buffer its
 * worker owns and overwrites the 24 bytes of the timestamp.
 */
import { createSeededRandom } from '@monitor/testkit';

/** The metric names of the spec's payload; every payload carries all three. */
export const fleetMetricNames = ['cpu_percent', 'memory_percent', 'disk_percent'] as const;

const containersPerPayload = 5;
const processesPerPayload = 10;
/** `Date#toISOString()` is always this long for years 0000–9999. */
const timestampLength = 24;
const timestampPlaceholder = '0000-00-00T00:00:00.000Z';

const environments = ['production', 'staging'] as const;
const serviceNames = ['api', 'web', 'worker', 'billing', 'search'] as const;
const regions = ['eu-west-1', 'us-east-1', 'ap-south-1'] as const;
const containerImages = [
  'nginx:1.27',
  'node:20-slim',
  'redis:7.4',
  'postgres:16',
  'envoy:v1.31',
] as const;
const processNames = [
  'systemd',
  'sshd',
  'dockerd',
  'containerd',
  'node',
  'nginx',
  'postgres',
  'redis-server',
  'envoy',
  'cron',
] as const;

type HostTemplate = {
  readonly bytes: Buffer;
  /** Where the timestamp's 24 characters start in `bytes`. */
  readonly timestampOffset: number;
};

export type BodySource = {
  /** Metric values (samples) each body carries: what a 200 reports as `events_accepted`. */
  readonly samplesPerRequest: number;
  /** Largest body this source produces, in bytes. */
  readonly maxBodyBytes: number;
  /**
   * The next request body for worker `slot` (0 ≤ slot < slots). The buffer belongs to the slot
   * and is overwritten by that slot's next call: send it before asking again.
   */
  next(slot: number): Buffer;
};

export type Fleet = {
  /** Bytes of the largest single payload. */
  readonly maxPayloadBytes: number;
  /** How many payloads fit in a JSON array body of at most `maxBodyBytes`. */
  payloadsFitting(maxBodyBytes: number): number;
  /**
   * Bodies of `payloadsPerRequest` payloads (1: a bare object; more: an array), taking hosts in
   * turn. Each use of a host stamps it with the next millisecond of its own clock, so no two
   * payloads of a host ever share a timestamp and storage deduplicates nothing away.
   */
  createBodySource(options: { payloadsPerRequest: number; slots: number }): BodySource;
  /** Payloads stamped so far, over every source. */
  payloadsStamped(): number;
};

/**
 * `hostCount` hosts whose samples are stamped from `baseTimeMs` on, one millisecond further per
 * payload of the same host.
 */
export function createFleet(options: { hostCount: number; baseTimeMs: number }): Fleet {
  const { hostCount, baseTimeMs } = options;
  if (!Number.isInteger(hostCount) || hostCount < 1) throw new RangeError('hostCount must be ≥ 1');
  const templates = Array.from({ length: hostCount }, (_, index) => hostTemplate(index));
  const maxPayloadBytes = Math.max(...templates.map((template) => template.bytes.length));
  const stampCounts = new Uint32Array(hostCount);
  let cursor = 0;
  let stamped = 0;

  /** Copies the next host's payload to `target` at `position`; returns the new position. */
  const writeNextPayload = (target: Buffer, position: number): number => {
    const host = cursor;
    cursor = (cursor + 1) % hostCount;
    const template = templates[host];
    if (template === undefined) throw new Error(`no template for host ${host}`);
    template.bytes.copy(target, position);
    const timeMs = baseTimeMs + (stampCounts[host] ?? 0);
    stampCounts[host] = (stampCounts[host] ?? 0) + 1;
    stamped++;
    target.write(
      new Date(timeMs).toISOString(),
      position + template.timestampOffset,
      timestampLength,
      'latin1',
    );
    return position + template.bytes.length;
  };

  return {
    maxPayloadBytes,
    payloadsFitting(maxBodyBytes) {
      // `[` + n payloads + (n - 1) commas + `]`
      return Math.max(0, Math.floor((maxBodyBytes - 1) / (maxPayloadBytes + 1)));
    },
    createBodySource({ payloadsPerRequest, slots }) {
      if (!Number.isInteger(payloadsPerRequest) || payloadsPerRequest < 1) {
        throw new RangeError('payloadsPerRequest must be ≥ 1');
      }
      // A host appears at most once per body, so its payloads within one body never collide.
      if (payloadsPerRequest > hostCount) {
        throw new RangeError(
          `payloadsPerRequest (${payloadsPerRequest}) exceeds the fleet (${hostCount})`,
        );
      }
      const batched = payloadsPerRequest > 1;
      const maxBodyBytes = batched
        ? payloadsPerRequest * (maxPayloadBytes + 1) + 1
        : maxPayloadBytes;
      const buffers = Array.from({ length: slots }, () => Buffer.allocUnsafe(maxBodyBytes));
      return {
        samplesPerRequest: payloadsPerRequest * fleetMetricNames.length,
        maxBodyBytes,
        next(slot) {
          const buffer = buffers[slot];
          if (buffer === undefined) throw new RangeError(`no slot ${slot}`);
          if (!batched) return buffer.subarray(0, writeNextPayload(buffer, 0));
          let position = 0;
          buffer[position++] = 0x5b; // [
          for (let i = 0; i < payloadsPerRequest; i++) {
            if (i > 0) buffer[position++] = 0x2c; // ,
            position = writeNextPayload(buffer, position);
          }
          buffer[position++] = 0x5d; // ]
          return buffer.subarray(0, position);
        },
      };
    },
    payloadsStamped: () => stamped,
  };
}

function hostTemplate(index: number): HostTemplate {
  // Deterministic values per host, so every run sends the same fleet.
  const random = createSeededRandom(index + 1).next;
  const percent = (): number => Math.round(random() * 1000) / 10;
  const payload = {
    host: `bench-host-${String(index).padStart(5, '0')}`,
    timestamp: timestampPlaceholder,
    metrics: Object.fromEntries(fleetMetricNames.map((name) => [name, percent()])),
    tags: {
      environment: pick(environments, index),
      service: pick(serviceNames, index),
      region: pick(regions, index),
    },
    docker_containers: Array.from({ length: containersPerPayload }, (_, i) => ({
      name: `${pick(serviceNames, index + i)}-${i + 1}`,
      image: pick(containerImages, i),
      status: 'running',
      cpu_percent: Math.round(random() * 500) / 10,
      memory_usage: Math.round(random() * 512) * 1_048_576,
    })),
    processes: Array.from({ length: processesPerPayload }, (_, i) => ({
      name: pick(processNames, i),
      pid: 100 + i * 37 + (index % 97),
      cpu_percent: Math.round(random() * 300) / 10,
      memory_rss: Math.round(random() * 256) * 1_048_576,
    })),
  };
  const json = JSON.stringify(payload);
  const timestampOffset = json.indexOf(timestampPlaceholder);
  if (timestampOffset < 0) throw new Error('timestamp placeholder missing from the payload');
  return { bytes: Buffer.from(json, 'latin1'), timestampOffset };
}

/** The value at `index`, wrapping around `values`. */
export function pick<T>(values: readonly T[], index: number): T {
  const value = values[index % values.length];
  if (value === undefined) throw new RangeError('pick from an empty list');
  return value;
}
