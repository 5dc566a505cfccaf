// @services postgres timescale
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { NativeHistogram, TimedHistogram } from '@monitor/schemas';
import type { Database } from '../core/database.js';
import { createSampleStore } from '../samples/sample-store.js';
import type { HostSample } from '../samples/sample-batch.js';
import { buildHostSample } from '@monitor/testkit/builders';
import { migratedDatabase } from '../testing/clean-database.js';
import { compactHistogramChunks, readHistograms } from './histogram-chunks.js';

const minuteMs = 60_000;

/** A latency histogram as a client library grows one: 12 buckets, each bucket a little more. */
function latency(step: number): NativeHistogram {
  const positiveBuckets = Array.from({ length: 12 }, (_, b) => step * (12 - b) + ((step * b) % 3));
  const zeroCount = step % 2;
  return {
    integer: true,
    schema: 3,
    zeroThreshold: 2.938735877055719e-39,
    zeroCount,
    count: positiveBuckets.reduce((sum, count) => sum + count, zeroCount),
    sum: step * 1.375 + (step % 7) * 0.001,
    positiveSpans: [
      { offset: -4, length: 8 },
      { offset: 2, length: 4 },
    ],
    positiveBuckets,
    negativeSpans: [],
    negativeBuckets: [],
    counterResetHint: step === 0 ? 'yes' : 'no',
    customValues: [],
  };
}

describe.each(['postgres', 'timescale'] as const)('native histograms on %s', (engine) => {
  let db: Database;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase(engine, 'db_histograms'));
  });

  afterAll(async () => {
    await dispose?.();
  });

  const labelled = (orgId: string, timeMs: number, histograms: HostSample['histograms']) =>
    buildHostSample({
      orgId,
      host: 'api-1',
      timeMs,
      metrics: {},
      tags: { job: 'api', instance: 'api-1:8080' },
      tagsLabelSeries: true,
      histograms,
    });

  const seriesIdOf = async (orgId: string, metric: string): Promise<string> => {
    const [row] = await db.sql<{ id: string }[]>`
      select r.id::text as id from series r join services v on v.id = r.service_id
      where v.org_id = ${orgId} and r.metric = ${metric}
    `;
    return row!.id;
  };

  it('stores them as written, the first at a time standing, and compacts them into chunks', async () => {
    const orgId = `org_histograms_${engine}`;
    const store = createSampleStore(db, { method: 'insert' });
    const now = Date.now();
    // An hour of 15-second scrapes, ending 40 minutes ago, and one just in.
    const t0 = Math.floor((now - 100 * minuteMs) / 1000) * 1000;
    const written: TimedHistogram[] = Array.from({ length: 240 }, (_, i) => ({
      // Scrapes jitter by a few milliseconds, as Prometheus' do.
      timeMs: t0 + i * 15_000 + ((i * 7) % 5),
      histogram: latency(i),
    }));
    const fresh = { timeMs: now - 1000, histogram: latency(500) };
    const result = await store.writeBatch({
      samples: [...written, fresh].map(({ timeMs, histogram }) =>
        labelled(orgId, timeMs, { request_seconds: histogram }),
      ),
    });
    expect(result).toMatchObject({ histogramsWritten: 241, samplesWritten: 0, servicesCreated: 1 });
    // The same time again, another histogram: the first stands.
    const again = await store.writeBatch({
      samples: [labelled(orgId, written[3]!.timeMs, { request_seconds: latency(99) })],
    });
    expect(again).toMatchObject({ histogramsWritten: 0 });

    const seriesId = await seriesIdOf(orgId, 'request_seconds');
    const everything = async () =>
      (await readHistograms(db, [seriesId], t0 - 1, now)).get(seriesId) ?? [];
    expect(await everything()).toEqual([...written, fresh]);

    // The maintenance of 50 minutes into the hour: 40 minutes settled, one whole chunk of them.
    const early = await compactHistogramChunks(db, { now: new Date(t0 + 50 * minuteMs) });
    expect(early).toEqual({ series: 1, histograms: 120, chunksWritten: 1 });
    // Now the other 120 settled: a chunk; the fresh one waits.
    const compacted = await compactHistogramChunks(db, { now: new Date(now) });
    expect(compacted).toEqual({ series: 1, histograms: 120, chunksWritten: 1 });
    expect(await compactHistogramChunks(db, { now: new Date(now) })).toMatchObject({
      histograms: 0,
    });
    const chunkSizes = async () =>
      (
        await db.sql<{ samples: number }[]>`
          select samples from histogram_chunks where series_id = ${seriesId}::bigint order by time
        `
      ).map((row) => row.samples);
    expect(await chunkSizes()).toEqual([120, 120]);
    expect(await everything()).toEqual([...written, fresh]);
    // A range within a chunk.
    const middle = await readHistograms(db, [seriesId], written[10]!.timeMs, written[12]!.timeMs);
    expect(middle.get(seriesId)).toEqual(written.slice(10, 13));
    // A late histogram at a compacted time: written, but the first stands, in reads and once
    // compacted too (with the fresh one, alone for longer than a chunk waits).
    const late = await store.writeBatch({
      samples: [labelled(orgId, written[50]!.timeMs, { request_seconds: latency(7) })],
    });
    expect(late).toMatchObject({ histogramsWritten: 1 });
    expect(await everything()).toEqual([...written, fresh]);
    const closing = await compactHistogramChunks(db, { now: new Date(now + 3 * 3_600_000) });
    expect(closing).toEqual({ series: 1, histograms: 2, chunksWritten: 1 });
    expect(await chunkSizes()).toEqual([120, 120, 1]);
    expect(await everything()).toEqual([...written, fresh]);
    const [left] = await db.sql<{ n: number }[]>`select count(*)::int as n from histogram_samples`;
    expect(left?.n).toBe(0);
  });

  it('costs a few bytes per histogram once compacted', async () => {
    const orgId = `org_histogram_bytes_${engine}`;
    const store = createSampleStore(db, { method: 'insert' });
    const now = Date.now();
    const t0 = now - 2 * 24 * 3_600_000 + 3_600_000;
    const samples = 2_880; // 12 hours at 15 s
    for (let start = 0; start < samples; start += 720) {
      await store.writeBatch({
        samples: Array.from({ length: 720 }, (_, i) =>
          labelled(orgId, t0 + (start + i) * 15_000, { request_seconds: latency(start + i) }),
        ),
      });
    }
    await compactHistogramChunks(db, { now: new Date(now) });
    const seriesId = await seriesIdOf(orgId, 'request_seconds');
    expect((await readHistograms(db, [seriesId], t0, now)).get(seriesId)).toHaveLength(samples);
    const [size] = await db.sql<{ bytes: number; rows: number }[]>`
      select sum(pg_column_size(chunk))::int as bytes, count(*)::int as rows
      from histogram_chunks where series_id = ${seriesId}::bigint
    `;
    expect(size?.rows).toBe(samples / 120);
    // 12 counts, a sum and a time per histogram: stored, not counting row overhead.
    expect(size!.bytes / samples).toBeLessThan(16);
  });
});
