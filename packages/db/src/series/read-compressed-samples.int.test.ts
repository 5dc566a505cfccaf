// @services timescale
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import { createSampleStore } from '../samples/sample-store.js';
import { migratedDatabase } from '../testing/clean-database.js';
import type { StoredPoints } from './merge-series-points.js';
import {
  listSampleChunks,
  readCompressedSamples,
  UndecodableBatchError,
} from './read-compressed-samples.js';
import { readRawSamples, readSamples } from './read-samples.js';

const minuteMs = 60_000;
const signal = new AbortController().signal;

/** What agents send (decimals, counters, byte counts), and any finite double. */
const value = fc.oneof(
  fc.integer({ min: -1_000_000, max: 100_000_000 }).map((n) => n / 10),
  fc.integer({ min: 0, max: 2 ** 40 }).map((n) => n * 4096),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.constantFrom(0, -0, 1 / 3, 1e100, -1e100, 0.1 + 0.2, 5e-324, Number.MAX_VALUE),
);

/** Counters as scraped: growing by varying amounts, now and then reset. */
const counter = fc
  .array(fc.tuple(fc.integer({ min: 0, max: 2 ** 30 }), fc.boolean()), {
    minLength: 1,
    maxLength: 1500,
  })
  .map((steps) => {
    let total = 0;
    return steps.map(([step, reset]) => (total = reset && step % 50 === 0 ? 0 : total + step));
  });

/** Bit for bit: −0 is not +0. */
const plain = (read: Map<string, StoredPoints>) =>
  Object.fromEntries(
    [...read].map(([id, p]) => [
      id,
      {
        times: Array.from(p.timestampsMs),
        values: Array.from(p.values, (v) => (Object.is(v, -0) ? '-0' : v)),
        nanFree: p.nanFree ?? false,
      },
    ]),
  );

describe('raw samples read from compressed batches', () => {
  let db: Database;
  let dispose: () => Promise<void>;
  let run = 0;

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase('timescale', 'compressed_reads'));
  });

  afterAll(async () => {
    await dispose?.();
  });

  /**
   * Writes each of `series` (values at 15 s, ±15 ms of jitter, the last ending `hoursAgo`) as
   * a series of its own through the sample store; returns their ids and time span.
   */
  async function write(
    series: readonly (readonly number[])[],
    jitter: readonly number[],
    hoursAgo: number,
  ) {
    const orgId = `org_compressed_${run++}`;
    const endMs = Math.floor(Date.now() / minuteMs) * minuteMs - hoursAgo * 60 * minuteMs;
    const longest = Math.max(...series.map((s) => s.length));
    const startMs = endMs - longest * 15_000;
    await createSampleStore(db).writeBatch({
      samples: series.flatMap((values, s) =>
        values.map((v, i) => ({
          orgId,
          host: `host-${s}`,
          timeMs: startMs + i * 15_000 + (jitter[(i + s) % jitter.length] ?? 0),
          metrics: { m: v },
          tags: {},
          containers: [],
          processes: [],
        })),
      ),
    });
    const ids = (
      await db.sql<{ id: string }[]>`
        select s.id::text as id from series s join services v on v.id = s.service_id
        where v.org_id = ${orgId} order by s.id`
    ).map((r) => r.id);
    return { ids, startMs, endMs };
  }

  const compressAll = () =>
    db.sql`select compress_chunk(c, if_not_compressed => true) from show_chunks('samples') c`;

  /** The same samples through `raw_scaled_samples`, decoded by the server. */
  const throughSql = (ids: string[], range: { startMs: number; endMs: number }) =>
    readSamples(db.sql, ids, range, signal, undefined);

  it('reads every stored value bit for bit as the server decodes it, compressed, late into a compressed chunk and not compressed yet', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(fc.oneof(fc.array(value, { minLength: 1, maxLength: 1500 }), counter), {
          minLength: 1,
          maxLength: 4,
        }),
        fc.array(fc.integer({ min: -15, max: 15 }), { minLength: 1, maxLength: 7 }),
        fc.integer({ min: 0, max: 400 }),
        async (series, jitter, cutPerMille) => {
          const { ids, startMs, endMs } = await write(series, jitter, 2);
          await compressAll();
          // Late samples into the compressed chunk (its rows of its own), and the newest ones
          // in a head chunk: one more sample a series, at times no batch holds.
          const store = createSampleStore(db);
          await store.writeBatch({
            samples: series.flatMap((_, s) =>
              [startMs + 7_503, endMs + 3 * minuteMs].map((timeMs, i) => ({
                orgId: `org_compressed_${run - 1}`,
                host: `host-${s}`,
                timeMs,
                metrics: { m: s * 10 + i + 0.5 },
                tags: {},
                containers: [],
                processes: [],
              })),
            ),
          });
          // A range that cuts into batches at either end, and holds the newest sample.
          const range = {
            startMs: startMs + Math.floor(((endMs - startMs) * cutPerMille) / 1000),
            endMs: endMs + 5 * minuteMs - cutPerMille * 90,
          };
          const parts = [ids.slice(0, 2), ids.slice(2)].filter((p) => p.length > 0);
          const want = plain(await throughSql(ids, range));
          expect(Object.keys(want)).toHaveLength(series.length);
          expect(plain(await readRawSamples(db, parts, range, signal, undefined))).toEqual(want);
          // And from the batches alone, unless a compression job changed them meanwhile.
          const chunks = await listSampleChunks(db.sql, range.startMs, range.endMs);
          expect(chunks?.compressed.length).toBeGreaterThan(0);
          const batches = plain(
            await readCompressedSamples(
              db.sql,
              parts,
              range.startMs,
              range.endMs,
              chunks!,
              (n) => new Float64Array(n),
              signal,
            ),
          );
          const after = await listSampleChunks(db.sql, range.startMs, range.endMs);
          if (after?.fingerprint === chunks?.fingerprint) expect(batches).toEqual(want);
        },
      ),
      { numRuns: 8 },
    );
  });

  it('decodes the batches itself where the values allow, and names the chunks it read', async () => {
    const series = [
      Array.from({ length: 2500 }, (_, i) => i * 2.5),
      // Thirds: some scaled at 16 digits (differences past 2^53 between them), some floats.
      Array.from({ length: 2500 }, (_, i) => (i % 97) / 3),
      Array.from({ length: 2500 }, () => 42),
      // Differences of differences past 32 bits (whole simple-8b blocks) and just under.
      Array.from({ length: 2500 }, (_, i) => (i % 2 === 0 ? 2 ** 40 : -(2 ** 40)) + i),
      Array.from({ length: 2500 }, (_, i) => (i % 2 === 0 ? 2 ** 29 : -(2 ** 29)) + i),
    ];
    const { ids, startMs, endMs } = await write(series, [0, 9, -13], 30);
    await compressAll();
    const range = { startMs, endMs };
    const chunks = await listSampleChunks(db.sql, startMs, endMs);
    expect(chunks?.compressed.length).toBeGreaterThan(0);
    const read = await readCompressedSamples(
      db.sql,
      [ids.slice(0, 1), ids.slice(1)],
      startMs,
      endMs,
      chunks!,
      (n) => new Float64Array(n),
      signal,
    );
    expect(plain(read)).toEqual(plain(await throughSql(ids, range)));
    // Floats (a third of an integer) go through Gorilla: not NaN-free by what was read.
    expect(read.get(ids[1]!)?.nanFree).toBeUndefined();
    expect(read.get(ids[0]!)?.nanFree).toBe(true);
  });

  it('leaves to the server a batch it cannot decode exactly, and reads it through SQL', async () => {
    const { ids, startMs, endMs } = await write([[1, 2, 3, 4]], [0], 40);
    // A row the writer never stores: a mantissa past 2^53, no float beside it.
    await db.sql`
      insert into samples (time, series_id, mantissa, scale, value)
      values (${startMs + 1}, ${ids[0]!}, ${(2n ** 60n).toString()}, 0, null)`;
    await compressAll();
    // Over hours: shorter ranges are the server's to decode anyway (read-samples.ts).
    const range = { startMs: startMs - 3 * 60 * minuteMs, endMs };
    const chunks = await listSampleChunks(db.sql, startMs, endMs);
    await expect(
      readCompressedSamples(
        db.sql,
        [ids],
        startMs,
        endMs,
        chunks!,
        (n) => new Float64Array(n),
        signal,
      ),
    ).rejects.toBeInstanceOf(UndecodableBatchError);
    const read = plain(await readRawSamples(db, [ids], range, signal, undefined));
    expect(read).toEqual(plain(await throughSql(ids, range)));
    expect(read[ids[0]!]?.values).toContain(2 ** 60);
  });

  it('sees a compression that moved samples under a read, as a change in the chunks it lists', async () => {
    const { ids, startMs, endMs } = await write(
      [Array.from({ length: 100 }, (_, i) => i)],
      [0],
      50,
    );
    const range = { startMs: startMs - 3 * 60 * minuteMs, endMs };
    const before = await listSampleChunks(db.sql, startMs, endMs);
    await compressAll();
    const after = await listSampleChunks(db.sql, startMs, endMs);
    expect(after?.fingerprint).not.toEqual(before?.fingerprint);
    // Read with the list from before, the compressed samples are missed: why it is checked.
    const stale = await readCompressedSamples(
      db.sql,
      [ids],
      startMs,
      endMs,
      before!,
      (n) => new Float64Array(n),
      signal,
    ).catch(() => new Map<string, StoredPoints>());
    expect(stale.get(ids[0]!)?.timestampsMs.length ?? 0).toBeLessThan(100);
    expect(plain(await readRawSamples(db, [ids], range, signal, undefined))).toEqual(
      plain(await throughSql(ids, range)),
    );
  });

  it('reads beside the compression jobs without a deadlock on either side, and misses nothing', async () => {
    // Two hours and a bit up to 20 minutes ago, in five-minute head chunks, as an api reads
    // a dashboard's range while the jobs compress, merge and recompress what it spans.
    const series = Array.from({ length: 12 }, (_, s) =>
      Array.from({ length: 560 }, (_, i) => s * 1000 + i),
    );
    const { ids, endMs } = await write(series, [0, 7, -11], 1 / 3);
    const orgId = `org_compressed_${run - 1}`;
    const range = { startMs: endMs - 2 * 60 * minuteMs, endMs };
    const before = plain(await throughSql(ids, range));
    const store = createSampleStore(db);
    const failures: string[] = [];
    let jobsDone = false;
    const jobs = async () => {
      for (let i = 0; i < 60; i++) {
        // A late sample into what may be compressed already (at a time no sample has).
        const lateMs = range.startMs + ((i * 7) % 120) * minuteMs + 1;
        await store.writeBatch({
          samples: ids.map((_, s) => ({
            orgId,
            host: `host-${s}`,
            timeMs: lateMs,
            metrics: { m: -i },
            tags: {},
            containers: [],
            processes: [],
          })),
        });
        const steps = [
          db.sql`select compress_chunk(c, if_not_compressed => true)
            from show_chunks('samples', older_than => ${Date.now() - 2 * minuteMs}::bigint) c`,
          db.sql`call consolidate_sample_chunks(0, '{}')`,
        ];
        for (const step of steps) await step.catch((err: Error) => failures.push(err.message));
      }
    };
    const reader = async () => {
      let reads = 0;
      while (!jobsDone || reads === 0) {
        reads++;
        const read = plain(
          await readRawSamples(db, [ids.slice(0, 5), ids.slice(5)], range, signal, undefined),
        );
        for (const id of ids) {
          const { times } = read[id]!;
          // Every sample stored before the jobs began, in order, once; late ones besides.
          expect(times.filter((t) => before[id]!.times.includes(t))).toEqual(before[id]!.times);
          expect(new Set(times).size).toBe(times.length);
        }
      }
      return reads;
    };
    const [, ...reads] = await Promise.all([
      jobs().finally(() => (jobsDone = true)),
      reader(),
      reader(),
      reader(),
    ]);
    expect(failures).toEqual([]);
    expect(reads.every((n) => n > 0)).toBe(true);
  });
});
