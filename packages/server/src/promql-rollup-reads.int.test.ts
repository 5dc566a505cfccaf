// @services timescale
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from '@monitor/testkit';
import type { TestDatabase } from '@monitor/testkit';
import { waitFor } from '@monitor/testkit/builders';
import { serviceUrl } from '@monitor/testkit/vitest';
import { postIngest } from './testing/ingest-client.js';
import { prometheusQuery, roundedValues } from './testing/prometheus-query.js';
import type { RoleProcess } from './testing/role-process.js';
import { startRoleProcess } from './testing/role-process.js';

/**
 * PromQL over a rollup tier (issue 57, point 4), on the real server: `max_source_resolution`
 * reads the 5-minute tier, answers exactly where a tier can (the functions that add up whole
 * buckets), and says so where it cannot.
 */
const key = `mon_test_${randomBytes(16).toString('hex')}`;
const minuteMs = 60_000;
const bucketMs = 5 * minuteMs;
let database: TestDatabase;
let monitor: RoleProcess;

const prometheus = prometheusQuery(() => monitor.baseUrl, key);
const values = roundedValues;

// Three hours of a gauge and a counter, a sample a minute at 30 s past, the counter 2 more at
// each (back to 2 after 60): ending 20 minutes ago.
const endMs = Math.floor(Date.now() / bucketMs) * bucketMs - 4 * bucketMs;
const startMs = endMs - 3 * 60 * minuteMs;

beforeAll(async () => {
  database = await createTestDatabase(serviceUrl('timescale'), 'promql_rollups');
  monitor = await startRoleProcess('all', {
    DATABASE_URL: database.url,
    MONITOR_BOOTSTRAP_API_KEY: key,
    INGEST_RATE_LIMIT_PER_MINUTE: '100000',
  });
  const payloads = [];
  for (let t = startMs - 30 * minuteMs, k = 0; t < endMs; t += minuteMs, k++) {
    payloads.push({
      host: 'rollup-host',
      timestamp: new Date(t + 30_000).toISOString(),
      metrics: { rollup_gauge: ((k * 37) % 101) / 4, rollup_counter: (k % 30) * 2 + 2 },
    });
  }
  expect((await postIngest(monitor.baseUrl, payloads, { key })).status).toBe(200);
  await waitFor(
    async () => {
      const answer = await prometheus('query', {
        query: 'count_over_time(rollup_counter[4h])',
        time: String(endMs / 1000),
      });
      return answer.body.data.result[0] !== undefined ? true : undefined;
    },
    30_000,
    'the samples stored',
  );
});

afterAll(async () => {
  await monitor?.stop();
  await database?.drop();
});

describe('max_source_resolution', () => {
  const range = {
    start: String((startMs + 60 * minuteMs) / 1000),
    end: String(endMs / 1000),
    step: '300',
  };

  it.each([
    'max_over_time(rollup_gauge[10m])',
    'min_over_time(rollup_gauge[1h])',
    'sum_over_time(rollup_gauge[30m])',
    'avg_over_time(rollup_gauge[15m])',
    'count_over_time(rollup_counter[1h])',
    'rollup_gauge',
  ])('answers %s from the 5-minute tier as from raw samples', async (query) => {
    const raw = await prometheus('query_range', { query, ...range });
    const tier = await prometheus('query_range', {
      query,
      ...range,
      max_source_resolution: '5m',
    });
    expect(raw.status).toBe(200);
    expect(tier.status).toBe(200);
    expect(values(raw)[0]?.length).toBeGreaterThan(20);
    expect(values(tier)).toEqual(values(raw));
    expect(tier.body.warnings).toBeUndefined();
  });

  it('answers a counter increase across resets, with a warning that it is approximate', async () => {
    const tier = await prometheus('query', {
      query: 'increase(rollup_counter[1h])',
      time: String(endMs / 1000),
      max_source_resolution: '5m',
    });
    expect(tier.status).toBe(200);
    // Sixty samples in the hour, each 2 more than the one before, resets included.
    expect(tier.body.data.result[0]).toMatchObject({ value: [endMs / 1000, '120'] });
    expect(tier.body.warnings).toEqual([
      expect.stringMatching(/^approximate: read from 5m rollups/),
    ]);
    const raw = await prometheus('query', {
      query: 'increase(rollup_counter[1h])',
      time: String(endMs / 1000),
      max_source_resolution: 'raw',
    });
    expect(raw.body.warnings).toBeUndefined();
  });

  it('refuses a resolution no tier has', async () => {
    const answer = await prometheus('query', {
      query: 'rollup_gauge',
      max_source_resolution: '10m',
    });
    expect(answer.status).toBe(400);
    expect(answer.body).toMatchObject({ status: 'error', errorType: 'bad_data' });
    expect(answer.body.error).toMatch(/max_source_resolution/);
  });
});
