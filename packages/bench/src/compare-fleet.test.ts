import { describe, expect, it } from 'vitest';
import { parseIngestBody, readCanonicalIngestBody } from '@monitor/schemas';
import type { WireFormat } from './compare-fleet.js';
import { bodyShape, createCompareFleet } from './compare-fleet.js';

const baseTimeMs = Date.UTC(2026, 10, 23, 12);

type Sample = {
  host: string;
  tags: Record<string, string>;
  metrics: Record<string, number>;
  timeMs: number;
};

/** `host,host=…,k=v… f=1.5,… <ms>` lines, as VictoriaMetrics' influx parser reads them. */
function parseLineProtocol(body: string): Sample[] {
  expect(body.endsWith('\n')).toBe(true);
  return body
    .slice(0, -1)
    .split('\n')
    .map((line) => {
      const [series = '', fields = '', time = ''] = line.split(' ');
      const [measurement, ...tagPairs] = series.split(',');
      expect(measurement).toBe('host');
      const tags = Object.fromEntries(tagPairs.map((pair) => pair.split('=')));
      const { host = '', ...rest } = tags as Record<string, string>;
      const metrics = Object.fromEntries(
        fields.split(',').map((pair) => {
          const [name = '', value = ''] = pair.split('=');
          return [name, Number(value)];
        }),
      );
      return { host, tags: rest, metrics, timeMs: Number(time) };
    });
}

function parseJson(body: string): Sample[] {
  const parsed = parseIngestBody(JSON.parse(body));
  if (!parsed.success) throw new Error(parsed.error.message);
  return parsed.data.map((payload) => ({
    host: payload.host,
    tags: payload.tags ?? {},
    metrics: payload.metrics,
    timeMs: Date.parse(payload.timestamp ?? ''),
  }));
}

/** What wrk's script does with the data file: line h·V + v, text before the tab, stamp, after. */
function assembleLikeWrk(
  lines: string[],
  format: WireFormat,
  options: { request: number; payloadsPerRequest: number; hostCount: number; variants: number },
): string {
  const parts: string[] = [];
  for (let i = 0; i < options.payloadsPerRequest; i++) {
    const p = options.request * options.payloadsPerRequest + i;
    const pass = Math.floor(p / options.hostCount);
    const line = lines[(p % options.hostCount) * options.variants + (pass % options.variants)];
    const [before = '', after = ''] = (line ?? '').split('\t');
    const timeMs = baseTimeMs + pass;
    parts.push(
      `${before}${format === 'influx' ? String(timeMs) : new Date(timeMs).toISOString()}${after}`,
    );
  }
  const shape = bodyShape(format, options.payloadsPerRequest);
  return `${shape.open}${parts.join(shape.separator)}${shape.close}`;
}

describe('createCompareFleet', () => {
  const fleet = createCompareFleet({ hostCount: 250, valueVariants: 4 });

  it.each([1, 100])(
    'gives both formats the same hosts, metrics, tags, values and times (%i per request)',
    (payloadsPerRequest) => {
      for (const request of [0, 1, 2, 7, 40]) {
        const options = { request, payloadsPerRequest, baseTimeMs };
        const influx = parseLineProtocol(fleet.requestBody('influx', options));
        const json = parseJson(fleet.requestBody('json', options));
        expect(influx).toHaveLength(payloadsPerRequest);
        expect(json).toEqual(influx);
        for (const [i, sample] of json.entries()) {
          const { values, ...expected } = fleet.sampleAt(
            request * payloadsPerRequest + i,
            baseTimeMs,
          );
          expect(sample).toEqual({ ...expected, metrics: values });
        }
      }
    },
  );

  it('carries three metrics and three tags per payload, nothing else', () => {
    const [payload] = parseJson(
      fleet.requestBody('json', { request: 3, payloadsPerRequest: 1, baseTimeMs }),
    );
    expect(Object.keys(payload?.metrics ?? {})).toEqual(['cpu', 'mem', 'disk']);
    expect(Object.keys(payload?.tags ?? {})).toEqual(['region', 'env', 'role']);
    const raw = JSON.parse(
      fleet.requestBody('json', { request: 3, payloadsPerRequest: 1, baseTimeMs }),
    ) as object;
    expect(Object.keys(raw)).toEqual(['host', 'timestamp', 'metrics', 'tags']);
  });

  it.each([1, 100])(
    'sends JSON bodies the gateway checks by hand, not through zod (%i per request)',
    (payloadsPerRequest) => {
      const body = fleet.requestBody('json', { request: 5, payloadsPerRequest, baseTimeMs });
      expect(readCanonicalIngestBody(JSON.parse(body))).toHaveLength(payloadsPerRequest);
    },
  );

  it('never sends a host twice at the same time, and changes its values from pass to pass', () => {
    const seen = new Set<string>();
    const valuesOfHost0 = new Set<string>();
    for (let request = 0; request < 20; request++) {
      const body = fleet.requestBody('influx', { request, payloadsPerRequest: 100, baseTimeMs });
      for (const sample of parseLineProtocol(body)) {
        const key = `${sample.host} ${sample.timeMs}`;
        expect(seen.has(key)).toBe(false);
        seen.add(key);
        if (sample.host === 'h00000') valuesOfHost0.add(JSON.stringify(sample.metrics));
      }
    }
    expect(seen.size).toBe(2000);
    expect(valuesOfHost0.size).toBe(4);
  });

  it.each(['influx', 'json'] as const)(
    'lets wrk build every body from its data file and the stamp alone (%s)',
    (format) => {
      const lines = fleet.fragmentLines(format).split('\n');
      expect(lines.pop()).toBe('');
      expect(lines).toHaveLength(250 * 4);
      for (const payloadsPerRequest of [1, 100]) {
        for (const request of [0, 5, 13]) {
          expect(
            assembleLikeWrk(lines, format, {
              request,
              payloadsPerRequest,
              hostCount: 250,
              variants: 4,
            }),
          ).toBe(fleet.requestBody(format, { request, payloadsPerRequest, baseTimeMs }));
        }
      }
    },
  );

  it('refuses more payloads per request than hosts, which would repeat a host in a body', () => {
    expect(() =>
      fleet.requestBody('json', { request: 0, payloadsPerRequest: 251, baseTimeMs }),
    ).toThrow(RangeError);
  });
});
