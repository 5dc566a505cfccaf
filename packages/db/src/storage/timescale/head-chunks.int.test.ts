// @services timescale
import { buildHostSample, uniqueOrgId } from '@monitor/testkit/builders';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../../core/database.js';
import type { HostSample } from '../../samples/sample-batch.js';
import { createSampleStore } from '../../samples/sample-store.js';
import { migratedDatabase } from '../../testing/clean-database.js';
import { hourMs } from '../rollups.js';
import { compressedChunkMs, headChunkMs } from './head-chunks.js';

const intervalMs = 15_000;
const seriesPerHost = 3;

/**
 * The newest samples as migration 33 lays them out (head-chunks.ts), with the jobs that
 * TimescaleDB's scheduler runs, run here by `run_job`: short unindexed chunks, compressed and
 * merged into one, then consolidated, every sample reading back as written at each step, late
 * samples and an agent's resend included.
 */
describe('the head chunks of samples on TimescaleDB', () => {
  let db: Database;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase('timescale', 'head_chunks'));
  });

  afterAll(async () => {
    await dispose?.();
  });

  const runJob = async (proc: string): Promise<void> => {
    const [job] = await db.sql<{ job_id: number }[]>`
      select job_id from timescaledb_information.jobs
      where proc_name = ${proc} and (hypertable_name = 'samples' or hypertable_name is null)`;
    expect(job, proc).toBeDefined();
    await db.sql`call run_job(${job!.job_id})`;
  };

  type Chunk = { name: string; compressed: boolean; from: number; to: number };
  const chunks = async (): Promise<Chunk[]> =>
    (
      await db.sql<{ name: string; compressed: boolean; from: string; to: string }[]>`
        select chunk_name as name, is_compressed as compressed,
          range_start_integer as from, range_end_integer as to
        from timescaledb_information.chunks
        where hypertable_schema = current_schema() and hypertable_name = 'samples'
        order by range_start_integer`
    ).map((row) => ({ ...row, from: Number(row.from), to: Number(row.to) }));

  /** Compressed batches per series of the org, over every compressed chunk of samples. */
  const batchesPerSeries = async (orgId: string): Promise<number> => {
    const compressed = await db.sql<{ name: string }[]>`
      select format('%I.%I', c2.schema_name, c2.table_name) as name
      from _timescaledb_catalog.chunk c1
      join _timescaledb_catalog.chunk c2 on c2.id = c1.compressed_chunk_id
      join _timescaledb_catalog.hypertable h on h.id = c1.hypertable_id
      where h.schema_name = current_schema() and h.table_name = 'samples'`;
    let batches = 0;
    const series = new Set<string>();
    for (const { name } of compressed) {
      const rows = await db.sql.unsafe<{ series_id: string; n: number }[]>(
        `select series_id, count(*)::int as n from ${name}
        where series_id in (select s.id from series s join services v on v.id = s.service_id
          where v.org_id = $1)
        group by 1`,
        [orgId],
      );
      for (const row of rows) {
        batches += row.n;
        series.add(row.series_id);
      }
    }
    return batches / series.size;
  };

  /** Every stored sample of the org, `series time value` sorted. */
  const stored = async (orgId: string): Promise<string[]> => {
    const rows = await db.sql<{ series_id: string; time_ms: string; value: number }[]>`
      select r.series_id, r.time_ms, r.value
      from raw_samples((select array_agg(s.id) from series s join services v on v.id = s.service_id
        where v.org_id = ${orgId}), 0, 9e15::bigint) r`;
    return rows.map((row) => `${row.series_id} ${row.time_ms} ${row.value}`).sort();
  };

  const scrape = (orgId: string, host: string, timeMs: number, seed: number): HostSample =>
    buildHostSample({
      orgId,
      host,
      timeMs,
      metrics: Object.fromEntries(
        Array.from({ length: seriesPerHost }, (_, i) => [`m${i}`, (seed * 7 + i) % 101]),
      ),
    });

  it('writes no per-row index, merges head chunks as they compress, consolidates them, and reads every sample back', async () => {
    const indexes = await db.sql<{ name: string; method: string }[]>`
      select c.relname as name, am.amname as method
      from pg_index i join pg_class c on c.oid = i.indexrelid join pg_am am on am.oid = c.relam
      where i.indrelid = 'samples'::regclass order by 1`;
    expect(indexes).toEqual([{ name: 'samples_time_idx', method: 'brin' }]);

    const store = createSampleStore(db);
    const orgId = uniqueOrgId();
    // 50 minutes of three hosts, ending more than the compressed span ago: ten head chunks,
    // which merge into one compressed chunk that no later one grows.
    const startMs =
      Math.floor((Date.now() - compressedChunkMs - 2 * hourMs) / headChunkMs) * headChunkMs;
    const hosts = ['a', 'b', 'c'];
    const scrapes = (50 * 60_000) / intervalMs;
    const batches: HostSample[][] = [];
    for (let k = 0; k < scrapes; k++) {
      // Up to 30 ms of jitter, each host its own.
      batches.push(
        hosts.map((host, h) =>
          scrape(orgId, host, startMs + k * intervalMs + ((k * 7 + h * 13) % 31), k + h),
        ),
      );
    }
    for (const samples of batches) await store.writeBatch({ samples });
    const written = await stored(orgId);
    expect(written).toHaveLength(scrapes * hosts.length * seriesPerHost);
    const inRange = (chunk: Chunk) => chunk.to > startMs && chunk.from < startMs + 50 * 60_000;
    const head = (await chunks()).filter(inRange);
    expect(head).toHaveLength(10);
    expect(head.every((chunk) => chunk.to - chunk.from === headChunkMs && !chunk.compressed)).toBe(
      true,
    );
    // Head chunks inherit no index but the BRIN on time.
    const [chunkIndexes] = await db.sql<{ methods: string[] }[]>`
      select array_agg(distinct am.amname::text) as methods
      from pg_index i join pg_class c on c.oid = i.indexrelid join pg_am am on am.oid = c.relam
      where i.indrelid = any(select format('%I.%I', chunk_schema, chunk_name)::regclass
        from timescaledb_information.chunks where hypertable_name = 'samples')`;
    expect(chunkIndexes?.methods).toEqual(['brin']);

    await runJob('policy_compression');
    const merged = (await chunks()).filter(inRange);
    expect(merged).toHaveLength(1);
    expect(merged[0]).toMatchObject({ compressed: true, to: startMs + 50 * 60_000 });
    expect(await batchesPerSeries(orgId)).toBe(10);
    expect(await stored(orgId)).toEqual(written);

    // A late sample lands in the compressed chunk; an agent's resend of a scrape stores nothing.
    const late = scrape(orgId, 'a', startMs + 7 * intervalMs + 5, 999);
    expect(await store.writeBatch({ samples: [late] })).toMatchObject({
      samplesWritten: seriesPerHost,
    });
    expect(await store.writeBatch({ samples: batches[12]! })).toMatchObject({
      samplesWritten: 0,
      duplicatesSkipped: hosts.length * seriesPerHost,
    });
    const withLate = await stored(orgId);
    expect(withLate).toHaveLength(written.length + seriesPerHost);

    await runJob('consolidate_sample_chunks');
    // 200 rows a series now fit one batch: the late sample's too, recompressed with them.
    expect(await batchesPerSeries(orgId)).toBe(1);
    expect(await stored(orgId)).toEqual(withLate);
    const [done] = await db.sql<{ names: string[] }[]>`
      select array_agg(chunk_name::text) as names from consolidated_sample_chunks`;
    expect(done?.names).toContain(merged[0]!.name);
  });

  it('stops merging head chunks into a compressed chunk once it spans 6 hours', async () => {
    const store = createSampleStore(db);
    const orgId = uniqueOrgId();
    // One scrape every head chunk over 6 hours and 20 minutes, well before the first test's.
    const startMs =
      Math.floor((Date.now() - 3 * compressedChunkMs) / compressedChunkMs) * compressedChunkMs;
    const scrapes = compressedChunkMs / headChunkMs + 4;
    for (let k = 0; k < scrapes; k++) {
      await store.writeBatch({ samples: [scrape(orgId, 'a', startMs + k * headChunkMs + 7, k)] });
    }
    const inRange = (chunk: Chunk) =>
      chunk.to > startMs && chunk.from < startMs + scrapes * headChunkMs;
    expect((await chunks()).filter(inRange)).toHaveLength(scrapes);
    await runJob('policy_compression');
    const merged = (await chunks()).filter(inRange);
    expect(merged.map((chunk) => [chunk.to - chunk.from, chunk.compressed])).toEqual([
      [compressedChunkMs, true],
      [4 * headChunkMs, true],
    ]);
    expect(await stored(orgId)).toHaveLength(scrapes * seriesPerHost);
  });

  it('consolidates a growing compressed chunk after an hour, then once as much merged again', async () => {
    const store = createSampleStore(db);
    const orgId = uniqueOrgId();
    // A chunk still growing: it starts 4 hours ago, so neither full nor long ended.
    const startMs = Math.floor((Date.now() - 4 * hourMs) / headChunkMs) * headChunkMs;
    const write = async (fromMinute: number, toMinute: number) => {
      for (let minute = fromMinute; minute < toMinute; minute += intervalMs / 60_000) {
        const timeMs = startMs + minute * 60_000;
        await store.writeBatch({ samples: [scrape(orgId, 'a', timeMs + 3, minute)] });
      }
    };
    await write(0, 70);
    await runJob('policy_compression');
    expect(await batchesPerSeries(orgId)).toBe(14);
    await runJob('consolidate_sample_chunks');
    expect(await batchesPerSeries(orgId)).toBe(1);
    // Half an hour more merges in; consolidated again only once it spans 70 minutes too.
    await write(70, 100);
    await runJob('policy_compression');
    expect(await batchesPerSeries(orgId)).toBe(7);
    await runJob('consolidate_sample_chunks');
    expect(await batchesPerSeries(orgId)).toBe(7);
    await write(100, 140);
    await runJob('policy_compression');
    await runJob('consolidate_sample_chunks');
    expect(await batchesPerSeries(orgId)).toBe(1);
    expect(await stored(orgId)).toHaveLength((140 * 60_000 * seriesPerHost) / intervalMs);
  });
});
