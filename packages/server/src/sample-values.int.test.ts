// @services timescale
import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import snappy from 'snappy';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '@monitor/testkit';
import type { TestDatabase } from '@monitor/testkit';
import { createApiCall, waitFor } from '@monitor/testkit/builders';
import { serviceUrl } from '@monitor/testkit/vitest';
import { encode } from './testing/prometheus-fixture.js';
import { readSamples, readTypes } from './testing/remote-read-client.js';
import type { RoleProcess } from './testing/role-process.js';
import { startRoleProcess } from './testing/role-process.js';

/**
 * Every value an agent sends comes back exactly as sent, bit for bit (−0 included, NaN and ±Inf
 * where the protocol takes them), through the real server on TimescaleDB's integer layout:
 * written by remote-write and /api/v1/ingest, read back by PromQL, remote read and the history
 * endpoint (issue 39, point 1). Property-based: arbitrary doubles and values as agents send
 * them, at scrape times with a few milliseconds of jitter.
 */
const key = `mon_test_${randomBytes(16).toString('hex')}`;
const minuteMs = 60_000;
let database: TestDatabase;
let monitor: RoleProcess;
let run = 0;

/** What agents send (decimals of a few digits, counters, whole pages of bytes) and any double. */
const agentValue = fc.oneof(
  fc.integer({ min: -1_000_000, max: 100_000_000 }).map((n) => n / 10),
  fc.integer({ min: 0, max: 10_000_000 }).map((n) => n / 100),
  fc.integer({ min: 0, max: 2 ** 40 }).map((n) => n * 4096),
  fc.constantFrom(0, -0, 1e100, -1e100, 0.1 + 0.2, 5e-324, Number.MAX_VALUE),
);
const anyValue = fc.oneof(agentValue, fc.double());
/** What /api/v1/ingest takes: finite, within ±1e100. */
const ingestValue = fc.oneof(
  agentValue.filter((v) => Math.abs(v) <= 1e100),
  fc.double({ min: -1e100, max: 1e100, noNaN: true }),
);

/** A value as text that tells −0 from +0 and names NaN and the infinities. */
function exact(value: number): string {
  return Object.is(value, -0) ? '-0' : String(value);
}

/** PromQL's answer for a value ("NaN", "+Inf", "-Inf", "-0", or Go's shortest float). */
function fromPromql(text: string): number {
  if (text === '+Inf') return Infinity;
  if (text === '-Inf') return -Infinity;
  return Number(text);
}

const api = createApiCall({ baseUrl: () => monitor.baseUrl, key });

/**
 * One sample a minute ending a few minutes ago, each stamped up to 15 ms off the middle of its
 * minute (so that each minute's bucket holds one sample, whatever the jitter).
 */
function timesFor(count: number, jitterMs: readonly number[]): number[] {
  const end = Math.floor(Date.now() / minuteMs) * minuteMs - 5 * minuteMs;
  return Array.from(
    { length: count },
    (_, i) => end - (count - i) * minuteMs + minuteMs / 2 + jitterMs[i]!,
  );
}

/** The raw samples of `metric` through PromQL (a range selector at an instant), time ordered. */
async function throughPromql(metric: string, endMs: number): Promise<[number, string][]> {
  const query = new URLSearchParams({ query: `${metric}[2h]`, time: String(endMs / 1000) });
  const { status, body } = await api<{
    data: { result: { values: [number, string][] }[] };
  }>(`/prometheus/api/v1/query?${query.toString()}`);
  expect(status).toBe(200);
  return (body.data.result[0]?.values ?? []).map(([t, v]) => [
    Math.round(t * 1000),
    exact(fromPromql(v)),
  ]);
}

/** Posts a remote-write 1.0 body, as Prometheus sends one. */
function remoteWrite(body: Buffer): Promise<Response> {
  return fetch(`${monitor.baseUrl}/api/v1/write`, {
    method: 'POST',
    headers: {
      'X-API-Key': key,
      'Content-Type': 'application/x-protobuf',
      'Content-Encoding': 'snappy',
      'X-Prometheus-Remote-Write-Version': '0.1.0',
    },
    body,
  });
}

/** The raw samples of `metric` through remote read, each value's 64 bits in hex. */
async function throughRemoteRead(metric: string, startMs: number, endMs: number) {
  const type = readTypes.lookupType('ReadRequest');
  const request = type.fromObject({
    queries: [
      {
        startTimestampMs: startMs,
        endTimestampMs: endMs,
        matchers: [{ type: 0, name: '__name__', value: metric }],
      },
    ],
    acceptedResponseTypes: [0],
  });
  const response = await fetch(`${monitor.baseUrl}/prometheus/api/v1/read`, {
    method: 'POST',
    headers: {
      'X-API-Key': key,
      'Content-Type': 'application/x-protobuf',
      'Content-Encoding': 'snappy',
      'X-Prometheus-Remote-Read-Version': '0.1.0',
    },
    body: snappy.compressSync(Buffer.from(type.encode(request).finish())),
  });
  expect(response.status).toBe(200);
  const [series] = readSamples(Buffer.from(await response.arrayBuffer()))[0] ?? [];
  return { times: series?.times ?? [], bits: series?.bits ?? [] };
}

/** Each bucket's average, minimum and maximum through the history endpoint, as exact text. */
async function throughHistory(host: string, metric: string, startMs: number, endMs: number) {
  const { body: list } = await api<{ services: { id: string; name: string }[] }>(
    '/api/v1/services?limit=100',
  );
  const service = list.services.find((s) => s.name === host);
  if (service === undefined) return undefined;
  const query = new URLSearchParams({
    metric,
    step: '1m',
    from: new Date(startMs - minuteMs).toISOString(),
    to: new Date(endMs + minuteMs).toISOString(),
  });
  // JSON has −0, and the JSON.parse of createApiCall keeps it.
  const { status, body } = await api<{
    points: { time: string; avg: number; min: number; max: number; count: number }[];
  }>(`/api/v1/services/${service.id}/metrics?${query.toString()}`);
  expect(status).toBe(200);
  return body.points.map((p) => [exact(p.avg), exact(p.min), exact(p.max), p.count]);
}

/** Prometheus' NormalNaN, the NaN a remote-writer sends as a value (encode writes it). */
const normalNaNBits = '7ff8000000000001';

function bitsOf(value: number): string {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value);
  return view.getBigUint64(0).toString(16);
}

beforeAll(async () => {
  database = await createTestDatabase(serviceUrl('timescale'), 'sample_values');
  monitor = await startRoleProcess('all', {
    DATABASE_URL: database.url,
    MONITOR_BOOTSTRAP_API_KEY: key,
    INGEST_RATE_LIMIT_PER_MINUTE: '100000',
  });
});

afterAll(async () => {
  await monitor?.stop();
  await database?.drop();
});

describe('sample values through the server', () => {
  it('reads back every value a remote-writer sent, bit for bit, by PromQL, remote read and the history', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(anyValue, { minLength: 1, maxLength: 40 }),
        fc.array(fc.integer({ min: -15, max: 15 }), { minLength: 40, maxLength: 40 }),
        async (values, jitter) => {
          const n = run++;
          const metric = `roundtrip_${n}`;
          const host = `rw-${n}`;
          const times = timesFor(values.length, jitter);
          // A NaN goes out as Prometheus' NormalNaN (a value, not a staleness marker).
          const body = encode([
            {
              labels: { __name__: metric, instance: `${host}:9100`, job: 'roundtrip' },
              samples: values.map((v, i) => [times[i]!, v]),
              nanIsValue: true,
            },
          ]);
          const answer = await remoteWrite(body);
          expect(answer.status, await answer.text()).toBe(204);
          const startMs = times[0]!;
          const endMs = times.at(-1)!;
          // A 204 means stored (embedded mode); read at once.
          expect(await throughPromql(metric, endMs)).toEqual(
            values.map((v, i) => [times[i]!, exact(v)]),
          );
          expect(await throughRemoteRead(metric, startMs, endMs)).toEqual({
            times,
            bits: values.map((v) => (Number.isNaN(v) ? normalNaNBits : bitsOf(v))),
          });
          // The aggregates take the finite values within ±1e100, one a minute: each bucket's
          // average, minimum and maximum are the value itself.
          const aggregated = values.filter((v) => Number.isFinite(v) && Math.abs(v) <= 1e100);
          const history = await waitFor(
            () => throughHistory(host, metric, startMs, endMs),
            10_000,
            'the service',
          );
          expect(history).toEqual(aggregated.map((v) => [exact(v), exact(v), exact(v), 1]));
        },
      ),
      { numRuns: 15 },
    );
  }, 240_000);

  it('reads back every value /api/v1/ingest took, bit for bit, by PromQL and the history', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(ingestValue, { minLength: 1, maxLength: 20 }),
        fc.array(fc.integer({ min: -15, max: 15 }), { minLength: 20, maxLength: 20 }),
        async (values, jitter) => {
          const n = run++;
          const metric = `roundtrip_${n}`;
          const host = `ingest-${n}`;
          const times = timesFor(values.length, jitter);
          for (let i = 0; i < values.length; i++) {
            const answer = await fetch(`${monitor.baseUrl}/api/v1/ingest`, {
              method: 'POST',
              headers: { 'X-API-Key': key, 'Content-Type': 'application/json' },
              // −0 as JSON text: JSON.stringify would send 0.
              body: `{"host":"${host}","timestamp":"${new Date(times[i]!).toISOString()}","metrics":{"${metric}":${exact(values[i]!)}}}`,
            });
            expect(answer.status).toBe(200);
          }
          const endMs = times.at(-1)!;
          expect(await throughPromql(metric, endMs)).toEqual(
            values.map((v, i) => [times[i]!, exact(v)]),
          );
          const history = await throughHistory(host, metric, times[0]!, endMs);
          expect(history).toEqual(values.map((v) => [exact(v), exact(v), exact(v), 1]));
        },
      ),
      { numRuns: 10 },
    );
  }, 240_000);

  it('keeps the first value of a point sent again and drops, and counts, a different one', async () => {
    /** The server's count of dropped points, by reason. */
    const duplicates = async (reason: string): Promise<number> => {
      const text = await (await fetch(`${monitor.baseUrl}/metrics`)).text();
      const line = text
        .split('\n')
        .find((each) => each.startsWith(`monitor_samples_duplicate_total{reason="${reason}"}`));
      return Number(line?.split(' ')[1] ?? Number.NaN);
    };
    await fc.assert(
      fc.asyncProperty(
        fc.array(anyValue, { minLength: 1, maxLength: 20 }),
        fc.array(fc.boolean(), { minLength: 20, maxLength: 20 }),
        fc.array(fc.integer({ min: -15, max: 15 }), { minLength: 20, maxLength: 20 }),
        async (values, changed, jitter) => {
          const n = run++;
          const metric = `resent_${n}`;
          const times = timesFor(values.length, jitter);
          const write = async (sent: readonly number[]): Promise<void> => {
            const answer = await remoteWrite(
              encode([
                {
                  labels: { __name__: metric, instance: `resent-${n}:9100`, job: 'resent' },
                  samples: sent.map((v, i) => [times[i]!, v]),
                  nanIsValue: true,
                },
              ]),
            );
            // One such point harms nobody: the request is answered as the rest deserves.
            expect(answer.status, await answer.text()).toBe(204);
          };
          // Another value where `changed` says so: one that differs bit for bit.
          const resent = values.map((v, i) =>
            changed[i] === true ? (Number.isNaN(v) ? 1 : Object.is(v, 0) ? -0 : -v || 1) : v,
          );
          const differing = values.filter((v, i) => !Object.is(v, resent[i])).length;
          await write(values);
          const [sameBefore, differentBefore] = [
            await duplicates('same_value'),
            await duplicates('different_value'),
          ];
          // An agent's retry of the same body, then the same points with some values changed.
          await write(values);
          await write(resent);
          expect(await throughPromql(metric, times.at(-1)!)).toEqual(
            values.map((v, i) => [times[i]!, exact(v)]),
          );
          expect(await duplicates('same_value')).toBe(
            sameBefore + values.length + values.length - differing,
          );
          expect(await duplicates('different_value')).toBe(differentBefore + differing);
        },
      ),
      { numRuns: 10 },
    );
  }, 240_000);
});
