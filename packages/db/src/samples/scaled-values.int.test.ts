// @services postgres timescale
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLabelMatcher } from '@monitor/promql';
import type { Database } from '../core/database.js';
import { createPrometheusSeriesSource } from '../series/prometheus-series-source.js';
import { createServiceQueries } from '../services/service-queries.js';
import { migratedDatabase } from '../testing/clean-database.js';
import { isAggregatable } from './sample-batch.js';
import { createSampleStore } from './sample-store.js';

const minuteMs = 60_000;
const signal = new AbortController().signal;
const hints = { stepMs: 0, rangeMs: 0, func: null, maxSeries: 10 };

/** What agents send (decimals of a few digits, counters, byte counts), and any finite double. */
const value = fc.oneof(
  fc.integer({ min: -1_000_000, max: 100_000_000 }).map((n) => n / 10),
  fc.integer({ min: 0, max: 10_000_000 }).map((n) => n / 100),
  fc.integer({ min: 0, max: 2 ** 40 }).map((n) => n * 4096),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 1e100, -1e100, 0.1 + 0.2, 5e-324, Number.MAX_VALUE),
);

/** Bit for bit: −0 is not +0. */
const bits = (values: readonly number[]) => values.map((v) => (Object.is(v, -0) ? '-0' : v));

describe.each(['postgres', 'timescale'] as const)('sample values on %s', (engine) => {
  let db: Database;
  let dispose: () => Promise<void>;
  let run = 0;

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase(engine, `scaled_values_${engine}`));
  });

  afterAll(async () => {
    await dispose?.();
  });

  /**
   * Writes `values` of one new series through the sample store, one a minute ending an hour
   * ago, in batches of `perBatch` (2,000 rows and more go in by COPY, fewer by INSERT); returns
   * where to read them.
   */
  async function write(values: readonly number[], perBatch: number) {
    const orgId = `org_scaled_${run}`;
    const host = `host-${run++}`;
    const endMs = Math.floor(Date.now() / minuteMs) * minuteMs - 60 * minuteMs;
    const startMs = endMs - values.length * minuteMs;
    const store = createSampleStore(db);
    for (let from = 0; from < values.length; from += perBatch) {
      await store.writeBatch({
        samples: values.slice(from, from + perBatch).map((v, i) => ({
          orgId,
          host,
          timeMs: startMs + (from + i) * minuteMs,
          metrics: { m: v },
          tags: {},
          containers: [],
          processes: [],
        })),
      });
    }
    const [service] = await db.sql<{ id: string }[]>`
      select id from services where org_id = ${orgId} and name = ${host}`;
    return { orgId, serviceId: service!.id, startMs, endMs };
  }

  async function readThroughPromql(where: Awaited<ReturnType<typeof write>>) {
    const source = createPrometheusSeriesSource(db, where.orgId);
    const range = { startMs: where.startMs, endMs: where.endMs };
    const [series] = await source.select(
      [createLabelMatcher('__name__', '=', 'm')],
      range,
      hints,
      signal,
    );
    return Array.from(series?.values ?? []);
  }

  async function readThroughHistory(where: Awaited<ReturnType<typeof write>>) {
    const queries = createServiceQueries(db, { staleAfterSeconds: 300 });
    const buckets = await queries.readMetricSeries({
      orgId: where.orgId,
      serviceId: where.serviceId,
      metric: 'm',
      step: '1m',
      from: new Date(where.startMs),
      to: new Date(where.endMs),
    });
    return buckets ?? [];
  }

  it('reads back every value bit for bit, through PromQL and the history endpoint', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(value, { minLength: 1, maxLength: 300 }),
        fc.constantFrom(1, 7, 2_500),
        async (values, perBatch) => {
          const where = await write(values, perBatch);
          expect(bits(await readThroughPromql(where))).toEqual(bits(values));
          // One sample a minute: each bucket's minimum and maximum are the sample itself. Values
          // beyond ±1e100 (the edge's bound) are stored apart and skipped by the aggregates
          // (unaggregated_samples): they have no bucket.
          const history = await readThroughHistory(where);
          const expected = bits(values.filter(isAggregatable));
          expect(bits(history.map((b) => b.min))).toEqual(expected);
          expect(bits(history.map((b) => b.max))).toEqual(expected);
          expect(history.map((b) => Number(b.count))).toEqual(expected.map(() => 1));
        },
      ),
      { numRuns: 12 },
    );
  });

  it('reads back a batch that goes in by COPY bit for bit', async () => {
    const values = fc.sample(value, { numRuns: 2_500, seed: 39 });
    const where = await write(values, values.length);
    expect(bits(await readThroughPromql(where))).toEqual(bits(values));
  });
});
