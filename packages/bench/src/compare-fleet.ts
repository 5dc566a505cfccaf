/**
 * The fleet `bench:compare` sends to every target: each payload is one host with three metrics
 * (`cpu`, `mem`, `disk`) and three tags (`region`, `env`, `role`), rendered once as InfluxDB line
 * protocol for VictoriaMetrics and once as our ingest JSON, with the same hosts, tags, values and
 * times in both. wrk builds the bodies from `fragmentLines` (see wrk-script.ts); `requestBody`
 * builds the same bodies here, for the smoke request before a load and for the tests.
 *
 * Payload p (counted from 0 over a load) is host p mod H at `baseTimeMs + ⌊p / H⌋` ms, so no
 * (host, time) is sent twice and neither system may legitimately deduplicate anything.
 */
import { createSeededRandom } from '@monitor/testkit';
import { pick } from './fleet.js';

export const compareMetricNames = ['cpu', 'mem', 'disk'] as const;

/** Influx measurement: VictoriaMetrics names the series `host_cpu`, `host_mem`, `host_disk`. */
const influxMeasurement = 'host';

const regions = ['eu-west-1', 'us-east-1', 'us-west-2', 'ap-south-1'] as const;
const envs = ['production', 'staging', 'development'] as const;
const roles = ['api', 'web', 'worker', 'db', 'cache', 'queue'] as const;

export type WireFormat = 'influx' | 'json';

/** How a body joins its payloads: `open + payloads.join(separator) + close`. */
export type BodyShape = { open: string; separator: string; close: string };

/** One host sample as both formats carry it. */
type FleetSample = {
  host: string;
  tags: { region: string; env: string; role: string };
  /** Metric name → value, the value written identically in both formats. */
  values: Record<(typeof compareMetricNames)[number], number>;
  timeMs: number;
};

export type CompareFleet = {
  readonly hostCount: number;
  /** Each host cycles through this many sets of values, one per pass over the fleet. */
  readonly valueVariants: number;
  /** The sample payload `payload` of a load stamped from `baseTimeMs` carries. */
  sampleAt(payload: number, baseTimeMs: number): FleetSample;
  /**
   * One line per (host, variant), host-major (line h·V + v, from 0): a payload is the line's
   * text before its tab, the stamp (`formatStamp`), then the text after the tab.
   */
  fragmentLines(format: WireFormat): string;
  /** The body of request `request` (from 0) of `payloadsPerRequest` payloads each. */
  requestBody(
    format: WireFormat,
    options: { request: number; payloadsPerRequest: number; baseTimeMs: number },
  ): string;
};

/** Where a payload's time goes: epoch milliseconds (`/write?precision=ms`) or ISO 8601. */
function formatStamp(format: WireFormat, timeMs: number): string {
  return format === 'influx' ? String(timeMs) : new Date(timeMs).toISOString();
}

export function bodyShape(format: WireFormat, payloadsPerRequest: number): BodyShape {
  if (format === 'influx') return { open: '', separator: '\n', close: '\n' };
  return payloadsPerRequest === 1
    ? { open: '', separator: '', close: '' }
    : { open: '[', separator: ',', close: ']' };
}

export function createCompareFleet(options: {
  hostCount: number;
  valueVariants: number;
}): CompareFleet {
  const { hostCount, valueVariants } = options;
  if (!Number.isInteger(hostCount) || hostCount < 1) throw new RangeError('hostCount must be ≥ 1');
  if (!Number.isInteger(valueVariants) || valueVariants < 1)
    throw new RangeError('valueVariants must be ≥ 1');
  const hosts = Array.from({ length: hostCount }, (_, index) => hostOf(index, valueVariants));

  const sampleOf = (host: number, variant: number, timeMs: number): FleetSample => {
    const spec = hosts[host];
    const values = spec?.variants[variant];
    if (spec === undefined || values === undefined) throw new RangeError(`no host ${host}`);
    return { host: spec.name, tags: spec.tags, values, timeMs };
  };
  const sampleAt = (payload: number, baseTimeMs: number): FleetSample => {
    const pass = Math.floor(payload / hostCount);
    return sampleOf(payload % hostCount, pass % valueVariants, baseTimeMs + pass);
  };

  return {
    hostCount,
    valueVariants,
    sampleAt,
    fragmentLines(format) {
      const lines: string[] = [];
      for (let host = 0; host < hostCount; host++) {
        for (let variant = 0; variant < valueVariants; variant++) {
          const [before, after] = renderPayload(format, sampleOf(host, variant, 0));
          lines.push(`${before}\t${after}\n`);
        }
      }
      return lines.join('');
    },
    requestBody(format, { request, payloadsPerRequest, baseTimeMs }) {
      if (payloadsPerRequest > hostCount)
        throw new RangeError(`${payloadsPerRequest} payloads per request exceed the fleet`);
      const payloads: string[] = [];
      for (let i = 0; i < payloadsPerRequest; i++) {
        const sample = sampleAt(request * payloadsPerRequest + i, baseTimeMs);
        const [before, after] = renderPayload(format, sample);
        payloads.push(`${before}${formatStamp(format, sample.timeMs)}${after}`);
      }
      const shape = bodyShape(format, payloadsPerRequest);
      return `${shape.open}${payloads.join(shape.separator)}${shape.close}`;
    },
  };
}

/** A payload as the text before and after its stamp. */
function renderPayload(format: WireFormat, sample: FleetSample): [string, string] {
  const { host, tags, values } = sample;
  if (format === 'influx') {
    const fields = compareMetricNames.map((name) => `${name}=${values[name]}`).join(',');
    return [
      `${influxMeasurement},host=${host},region=${tags.region},env=${tags.env},role=${tags.role} ${fields} `,
      '',
    ];
  }
  const rest = JSON.stringify({ metrics: values, tags });
  return [`{"host":${JSON.stringify(host)},"timestamp":"`, `",${rest.slice(1)}`];
}

function hostOf(
  index: number,
  variants: number,
): { name: string; tags: FleetSample['tags']; variants: FleetSample['values'][] } {
  // Deterministic per host, so every target and every run get the same fleet.
  const random = createSeededRandom(index + 1).next;
  const tenth = (): number => Math.round(random() * 1000) / 10;
  return {
    name: `h${String(index).padStart(5, '0')}`,
    tags: { region: pick(regions, index), env: pick(envs, index), role: pick(roles, index) },
    variants: Array.from({ length: variants }, () => ({
      cpu: tenth(),
      mem: tenth(),
      disk: tenth(),
    })),
  };
}
