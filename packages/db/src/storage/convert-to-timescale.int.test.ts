// @services timescale
import { buildHostSample, uniqueOrgId } from '@monitor/testkit/builders';
import { describe, expect, it } from 'vitest';
import type { NativeHistogram } from '@monitor/schemas';
import { compactHistogramChunks, readHistograms } from '../histograms/histogram-chunks.js';
import { createSampleStore } from '../samples/sample-store.js';
import { migrate, migrateBefore } from '../schema/migrate.js';
import { cleanDatabase } from '../testing/clean-database.js';
import { convertToTimescale } from './convert-to-timescale.js';

/**
 * Plain storage onto TimescaleDB (`monitor storage convert-to-timescaledb`, then `migrate`), with
 * the exemplars' table (migration 38) and the native histograms' (39), and from a release before
 * them.
 */
describe('converting plain storage to TimescaleDB', () => {
  const histogram: NativeHistogram = {
    integer: true,
    schema: 2,
    zeroThreshold: 1e-128,
    zeroCount: 1,
    count: 4,
    sum: 2.5,
    positiveSpans: [{ offset: 1, length: 2 }],
    positiveBuckets: [1, 2],
    negativeSpans: [],
    negativeBuckets: [],
    counterResetHint: 'unknown',
    customValues: [],
  };
  const exemplarSample = (orgId: string, timeMs: number) =>
    buildHostSample({
      orgId,
      host: 'api',
      timeMs,
      metrics: { requests_total: 3 },
      tags: { job: 'api' },
      tagsLabelSeries: true,
      exemplars: [{ metric: 'requests_total', value: 1, labels: { trace_id: 'abc' } }],
    });

  it.each([
    ['at the latest version, its exemplars carried over', undefined],
    ['from before migration 38, whose migrate then makes the exemplars hypertable', 38],
  ] as const)('converts a database %s', async (_what, before) => {
    const { db, dispose } = await cleanDatabase('timescale', 'convert_plain');
    try {
      const orgId = uniqueOrgId();
      const timeMs = Date.now() - 60_000;
      if (before === undefined) {
        await migrate(db, { mode: 'postgres' });
        await createSampleStore(db).writeBatch({ samples: [exemplarSample(orgId, timeMs)] });
        // A histogram of three hours ago, compacted into its chunk.
        await createSampleStore(db).writeBatch({
          samples: [
            buildHostSample({
              orgId,
              host: 'api',
              timeMs: timeMs - 3 * 3_600_000,
              tags: { job: 'api' },
              tagsLabelSeries: true,
              histograms: { latency_seconds: histogram },
            }),
          ],
        });
        await compactHistogramChunks(db, { now: new Date() });
      } else {
        await migrateBefore(db, before, { mode: 'postgres' });
        // No exemplars: the table they go in does not exist yet.
        const sample = { ...exemplarSample(orgId, timeMs), exemplars: undefined };
        await createSampleStore(db).writeBatch({ samples: [sample] });
      }
      const converted = await convertToTimescale(db);
      const latest = before === undefined ? 1 : 0;
      expect(converted).toMatchObject({ samples: 1, exemplars: latest, histogramChunks: latest });
      await migrate(db);
      const hypertables = await db.sql<{ name: string }[]>`
        select hypertable_name as name from timescaledb_information.hypertables
        where hypertable_schema = current_schema()
          and hypertable_name in ('exemplars', 'histogram_chunks')
        order by 1`;
      expect(hypertables).toEqual([{ name: 'exemplars' }, { name: 'histogram_chunks' }]);
      if (before === undefined) {
        const [series] = await db.sql<{ id: string }[]>`
          select id::text as id from series where metric = 'latency_seconds'`;
        const read = await readHistograms(db, [series!.id], 0, timeMs);
        expect(read.get(series!.id)).toEqual([{ timeMs: timeMs - 3 * 3_600_000, histogram }]);
      }
      // Written after the conversion too.
      await createSampleStore(db).writeBatch({
        samples: [exemplarSample(orgId, timeMs + 1_000)],
      });
      const [stored] = await db.sql<{ n: number }[]>`select count(*)::int as n from exemplars`;
      expect(stored?.n).toBe(before === undefined ? 2 : 1);
    } finally {
      await dispose();
    }
  });
});
