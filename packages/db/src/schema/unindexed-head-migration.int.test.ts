// @services postgres timescale
import { buildHostSample } from '@monitor/testkit/builders';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import type { HostSample } from '../samples/sample-batch.js';
import { createSampleStore } from '../samples/sample-store.js';
import { headChunkMs } from '../storage/timescale/head-chunks.js';
import { cleanDatabase } from '../testing/clean-database.js';
import { hasSampleKey } from '../testing/sample-key.js';
import { migrate, migrateWith } from './migrate.js';
import { migrations } from './migrations.js';

const minuteMs = 60_000;
const hourMs = 60 * minuteMs;
const orgId = 'org_head_move';
const hosts = ['web-1', 'web-2', 'db-1'];
const policies = { compressAfterHours: 1 };

/** A scrape of `host` at `timeMs`: three metrics whose values depend on both. */
const scrape = (host: string, timeMs: number): HostSample =>
  buildHostSample({
    orgId,
    host,
    timeMs,
    metrics: {
      cpu: ((timeMs / 15_000) % 97) + hosts.indexOf(host) / 10,
      load: (timeMs / 15_000) % 7,
      ratio: 1 / (((timeMs / 15_000) % 13) + 1),
    },
  });

/**
 * Migration 33 (head-chunks.ts) on a database that holds a day of samples in the layout
 * before it, run by `monitor migrate` while a writer goes on storing: new scrapes and an
 * agent's resends of old ones, none of them failing. Every sample reads back once, with its
 * value; on TimescaleDB the key is gone and new chunks are
 * head chunks; plain PostgreSQL keeps its layout.
 */
describe.each(['timescale', 'postgres'] as const)(
  'migration 33 on a populated %s database while samples keep coming',
  (engine) => {
    let db: Database;
    let dispose: () => Promise<void>;
    const nowMs = Math.floor(Date.now() / minuteMs) * minuteMs;
    const written = new Map<string, number>();

    const write = async (samples: HostSample[]) => {
      await createSampleStore(db).writeBatch({ samples });
      for (const sample of samples) {
        for (const [metric, value] of Object.entries(sample.metrics)) {
          const key = `${sample.host} ${metric} ${sample.timeMs}`;
          if (!written.has(key)) written.set(key, value);
        }
      }
    };

    beforeAll(async () => {
      ({ db, dispose } = await cleanDatabase(engine, `head_move_${engine}`));
      await migrateWith(
        db,
        migrations.filter((migration) => migration.version < 33),
        { mode: engine, ...policies },
      );
      // A day of scrapes every minute, up to 20 minutes ago, in batches of an hour.
      for (let from = nowMs - 24 * hourMs; from < nowMs - 20 * minuteMs; from += hourMs) {
        const batch: HostSample[] = [];
        for (let t = from; t < Math.min(from + hourMs, nowMs - 20 * minuteMs); t += minuteMs)
          for (const host of hosts) batch.push(scrape(host, t));
        await write(batch);
      }
      if (engine === 'timescale') {
        await db.sql`select compress_chunk(c, if_not_compressed => true)
          from show_chunks('samples', older_than => ${nowMs - 2 * hourMs}::bigint) c`;
      }
    });

    afterAll(async () => {
      await dispose?.();
    });

    it('stores and reads back every sample once, before, during and after it', async () => {
      expect(await hasSampleKey(db)).toBe(true);

      let migrating = true;
      let round = 0;
      const ingest = (async () => {
        while (migrating || round < 5) {
          // The next 15 s of scrapes, and a resend of a minute of the old day.
          const t = nowMs - 20 * minuteMs + round * 15_000;
          const resent = nowMs - 24 * hourMs + (round % 1000) * minuteMs;
          await write([...hosts.map((host) => scrape(host, t)), scrape('web-1', resent)]);
          round++;
        }
      })();
      await migrate(db, { mode: engine, ...policies });
      migrating = false;
      await ingest;
      expect(round).toBeGreaterThanOrEqual(5);

      const rows = await db.sql<{ host: string; metric: string; time_ms: string; value: number }[]>`
        select v.name as host, s.metric, r.time_ms, r.value
        from raw_samples((select array_agg(id) from series), 0, 9e15::bigint) r
        join series s on s.id = r.series_id join services v on v.id = s.service_id`;
      const read = new Map<string, number>();
      for (const row of rows) {
        const at = `${row.host} ${row.metric} ${Number(row.time_ms)}`;
        expect(read.has(at), `${at} read twice`).toBe(false);
        read.set(at, row.value);
      }
      expect(read.size).toBe(written.size);
      for (const [at, value] of written) expect(read.get(at), at).toBe(value);

      if (engine === 'timescale') {
        expect(await hasSampleKey(db)).toBe(false);
        const [dimension] = await db.sql<{ interval: string }[]>`
          select integer_interval::text as interval from timescaledb_information.dimensions
          where hypertable_name = 'samples' and column_name = 'time'`;
        expect(Number(dimension!.interval)).toBe(headChunkMs);
        // A late sample older than the day: its chunk is a head chunk.
        const lateMs = nowMs - 30 * hourMs;
        await write([scrape('db-1', lateMs)]);
        const [late] = await db.sql<{ span: string }[]>`
          select (range_end_integer - range_start_integer)::text as span
          from timescaledb_information.chunks where hypertable_name = 'samples'
            and range_start_integer <= ${lateMs} and range_end_integer > ${lateMs}`;
        expect(Number(late!.span)).toBe(headChunkMs);
      } else {
        expect(await hasSampleKey(db)).toBe(true);
      }
    });
  },
);
