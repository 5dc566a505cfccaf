// @services postgres timescale
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLabelMatcher } from '@monitor/promql';
import type { Database } from '../core/database.js';
import type { HostSample } from '../samples/sample-batch.js';
import { createSampleStore } from '../samples/sample-store.js';
import { createPrometheusSeriesSource } from '../series/prometheus-series-source.js';
import { cleanDatabase } from '../testing/clean-database.js';
import { migrate, migrateWith } from './migrate.js';
import { migrations } from './migrations.js';

const hourMs = 3_600_000;
const orgId = 'org_sample_reads';

/** Two series as agents send them, a point every 15 s with a scrape's jitter, odd values too. */
function fleet(startMs: number, points: number): HostSample[] {
  const odd = [0.1 + 0.2, -0, 5e-324, Number.NaN, Number.POSITIVE_INFINITY, 2 ** 60, 1 / 3];
  return Array.from({ length: points }, (_, p) => ({
    orgId,
    host: 'reads-1',
    timeMs: startMs + p * 15_000 + ((p * 7919) % 31) - 15,
    metrics: {
      cpu: Math.round(500 + 400 * Math.sin(p / 17)) / 10,
      noise: odd[p % odd.length]! * (1 + p / 7),
    },
    tags: {},
    containers: [],
    processes: [],
  }));
}

/** Every stored value of `metric`, as PromQL's series source reads it, bit for bit. */
async function promqlValues(db: Database, metric: string): Promise<string[]> {
  const source = createPrometheusSeriesSource(db, orgId);
  const [series] = await source.select(
    [createLabelMatcher('__name__', '=', metric)],
    { startMs: 0, endMs: Date.UTC(9999, 0, 1) },
    { stepMs: 0, rangeMs: 0, func: null, maxSeries: 10 },
    new AbortController().signal,
  );
  return Array.from(series?.values ?? [], (v, i) => `${series?.timestampsMs[i]} ${bits(v)}`);
}

const bits = (value: number): string => {
  const view = new DataView(new ArrayBuffer(8));
  view.setFloat64(0, value);
  return Number.isNaN(value) ? 'NaN' : view.getBigUint64(0).toString(16);
};

/** What the agents sent of `metric`, in time order. */
function sent(samples: readonly HostSample[], metric: string): string[] {
  return [...samples]
    .sort((x, y) => x.timeMs - y.timeMs)
    .map((sample) => `${sample.timeMs} ${bits(sample.metrics[metric]!)}`);
}

describe.each(['postgres', 'timescale'] as const)('migrations 30 and 31 on %s', (engine) => {
  const startMs = Math.floor(Date.now() / (6 * hourMs)) * 6 * hourMs - 8 * hourMs;
  const before = fleet(startMs, 4 * 240);
  const after = fleet(startMs + 4 * hourMs, 240);
  let database: { db: Database; dispose: () => Promise<void> };

  beforeAll(async () => {
    database = await cleanDatabase(engine, `sample_reads_${engine}`);
    const { db } = database;
    await migrateWith(
      db,
      // Today's sample store writes the batch below: it needs migration 32's newest bounds
      // (a column and a table of their own, nothing the migrations tested here touch).
      migrations.filter((migration) => migration.version < 30 || migration.version === 32),
    );
    if (engine === 'timescale') {
      // As migration 24 made it before version 31: TimescaleDB's default btree on time.
      await db.sql`drop index samples_time_idx`;
      await db.sql`create index samples_time_idx on samples (time desc)`;
    }
    // Migration 24 makes today's read functions, this one among them.
    await db.sql`drop function raw_scaled_samples`;
    await createSampleStore(db).writeBatch({ samples: before });
    if (engine === 'timescale') {
      await db.sql`select compress_chunk(c, if_not_compressed => true)
        from show_chunks('samples', older_than => ${startMs + 6 * hourMs}::bigint) c`;
    }
    await migrate(db);
    await createSampleStore(db).writeBatch({ samples: after });
  });

  afterAll(async () => {
    await database?.dispose();
  });

  it('reads back every value as sent, bit for bit, written before and after', async () => {
    const readsBack = async () => {
      for (const metric of ['cpu', 'noise']) {
        const read = await promqlValues(database.db, metric);
        expect(read).toEqual(sent([...before, ...after], metric));
      }
    };
    await readsBack();
    if (engine === 'timescale') {
      // Chunks with the BRIN index compress, and read back the same.
      await database.db.sql`select compress_chunk(c, if_not_compressed => true)
        from show_chunks('samples') c`;
      await readsBack();
    }
  });

  it('indexes sample times by block range', async () => {
    const [index] = await database.db.sql<{ method: string }[]>`
      select am.amname as method from pg_class c join pg_am am on am.oid = c.relam
      where c.oid = to_regclass('samples_time_idx')`;
    expect(index?.method).toBe('brin');
  });
});
