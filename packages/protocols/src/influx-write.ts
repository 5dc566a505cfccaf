import type { DecodeOptions, DecodedHostSamples } from './decoded-host-samples.js';
import { parseLineProtocol } from './line-protocol.js';
import { createSampleCollector, flattenTags } from './sample-collector.js';

/** A timestamp unit of line protocol: nanoseconds … hours. */
export type InfluxPrecision = 'ns' | 'us' | 'ms' | 's' | 'm' | 'h';

/** The write API a request came through: `precision` values differ. */
export type InfluxApi = 'v1' | 'v2';

const v2Precisions: Record<string, InfluxPrecision> = { ns: 'ns', us: 'us', ms: 'ms', s: 's' };
/** InfluxDB 1.x also takes n, u, m (minutes) and h; `ns`, `us` are accepted there too. */
const v1Precisions: Record<string, InfluxPrecision> = {
  ...v2Precisions,
  n: 'ns',
  u: 'us',
  m: 'm',
  h: 'h',
};

/**
 * The `precision` query parameter of a write: absent means nanoseconds; an unknown value is
 * undefined (the gateway answers 400 naming the parameter).
 */
export function parseInfluxPrecision(
  value: string | undefined,
  api: InfluxApi,
): InfluxPrecision | undefined {
  if (value === undefined || value === '') return 'ns';
  const precisions = api === 'v1' ? v1Precisions : v2Precisions;
  return Object.hasOwn(precisions, value) ? precisions[value] : undefined;
}

const millisecondsPer: Record<'s' | 'm' | 'h', number> = { s: 1000, m: 60_000, h: 3_600_000 };

/**
 * An int64 timestamp in `precision` as whole epoch milliseconds, floored (exact: finer units
 * drop digits as text, since nanosecond counts exceed 2^53). Out-of-range results are left for
 * the collector to count as `invalid_timestamp`.
 */
export function influxTimestampToMs(timestamp: string, precision: InfluxPrecision): number {
  if (precision === 'ms') return Number(timestamp);
  if (precision === 'ns' || precision === 'us') {
    const drop = precision === 'ns' ? 6 : 3;
    const negative = timestamp.startsWith('-');
    const digits = negative ? timestamp.slice(1) : timestamp;
    const whole = digits.length > drop ? Number(digits.slice(0, -drop)) : 0;
    if (!negative) return whole;
    const remainder = digits.length > drop ? digits.slice(-drop) : digits;
    return /^0*$/.test(remainder) ? 0 - whole : -whole - 1;
  }
  return Number(timestamp) * millisecondsPer[precision];
}

export type InfluxDecodeOptions = DecodeOptions & { precision: InfluxPrecision };

/**
 * InfluxDB line protocol (v1 and v2 write APIs alike), UTF-8 text. Mapping (docs/agents.md):
 * metric = `<measurement>_<field>`; host = tag `host`; the other tags are tags; float,
 * integer and unsigned fields are values, booleans 1/0; string fields are skipped and
 * counted. A point without a timestamp takes `nowMs`. Throws `LineProtocolSyntaxError` naming
 * the first line that does not parse (nothing of the body is taken then, as InfluxDB does).
 */
export function decodeInfluxLineProtocol(
  body: Uint8Array,
  options: InfluxDecodeOptions,
): DecodedHostSamples {
  const text = Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8');
  const points = parseLineProtocol(text);
  const collector = createSampleCollector(options);
  const tags: string[] = [];
  let lastTimestamp: string | undefined;
  let lastTimeMs = options.nowMs;
  for (const point of points) {
    let host: string | undefined;
    const pairs: [string, string][] = [];
    for (const pair of point.tags) {
      if (pair[0] === 'host') host = pair[1];
      pairs.push(pair);
    }
    flattenTags(pairs, tags);
    if (point.timestamp !== lastTimestamp) {
      lastTimestamp = point.timestamp;
      lastTimeMs =
        point.timestamp === undefined
          ? options.nowMs
          : influxTimestampToMs(point.timestamp, options.precision);
    }
    for (const [field, value] of point.fields) {
      if (value.type === 'string') {
        collector.skip('string_field');
        continue;
      }
      const number = value.type === 'boolean' ? (value.value ? 1 : 0) : value.value;
      collector.add(host, lastTimeMs, tags, `${point.measurement}_${field}`, number);
    }
  }
  return collector.result();
}
