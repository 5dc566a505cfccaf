import { PromqlError } from '@monitor/promql';

/** Every parameter of a request: the URL's, then a form body's (both are allowed, as in Prometheus). */
export type PrometheusParams = {
  get(name: string): string | undefined;
  all(name: string): string[];
};

function values(source: unknown, name: string): string[] {
  if (typeof source !== 'object' || source === null) return [];
  const value = (source as Record<string, unknown>)[name];
  if (typeof value === 'string') return [value];
  if (Array.isArray(value)) return value.filter((v): v is string => typeof v === 'string');
  return [];
}

export function prometheusParams(query: unknown, body: unknown): PrometheusParams {
  return {
    get: (name) => values(query, name)[0] ?? values(body, name)[0],
    all: (name) => [...values(query, name), ...values(body, name)],
  };
}

function badParam(name: string, reason: string): PromqlError {
  return new PromqlError('bad_data', `invalid parameter "${name}": ${reason}`);
}

const minTimeMs = -9_223_372_036_854; // Go's minimum time in ms, what Prometheus' clients send as "no start"
const maxTimeMs = 9_223_372_036_854;

/**
 * A time as Prometheus takes it: Unix seconds with up to millisecond decimals, or RFC 3339.
 * Returns epoch ms.
 */
export function parsePrometheusTime(name: string, text: string): number {
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) {
    const seconds = Number(text);
    const whole = Math.trunc(seconds);
    return whole * 1000 + Math.round((seconds - whole) * 1000);
  }
  if (/^\d{4}-\d{2}-\d{2}T/.test(text)) {
    const ms = Date.parse(text);
    if (!Number.isNaN(ms)) return ms;
  }
  throw badParam(name, `cannot parse ${JSON.stringify(text)} to a valid timestamp`);
}

const durationPattern =
  /^(?:(\d+)y)?(?:(\d+)w)?(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?(?:(\d+)ms)?$/;
const unitsMs = [31_536_000_000, 604_800_000, 86_400_000, 3_600_000, 60_000, 1000, 1];

/** A step or timeout: seconds (decimals allowed) or a Prometheus duration. Returns ms. */
export function parsePrometheusDuration(name: string, text: string): number {
  if (/^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text)) {
    const seconds = Number(text);
    if (!Number.isFinite(seconds) || Math.abs(seconds) > 9.2e9) {
      throw badParam(
        name,
        `cannot parse ${JSON.stringify(text)} to a valid duration. It overflows int64`,
      );
    }
    return Math.trunc(seconds * 1000);
  }
  const match = durationPattern.exec(text);
  if (text !== '' && match !== null) {
    let ms = 0;
    unitsMs.forEach((unit, i) => {
      const count = match[i + 1];
      if (count !== undefined) ms += Number(count) * unit;
    });
    return ms;
  }
  throw badParam(name, `cannot parse ${JSON.stringify(text)} to a valid duration`);
}

/** The `start`/`end` of the metadata endpoints: all of time when absent. */
export function optionalTime(params: PrometheusParams, name: string, fallbackMs: number): number {
  const text = params.get(name);
  if (text === undefined || text === '') return fallbackMs;
  return Math.min(Math.max(parsePrometheusTime(name, text), minTimeMs), maxTimeMs);
}

export const allOfTime = { startMs: minTimeMs, endMs: maxTimeMs };
