// @services postgres timescale
import { buildHostSample, uniqueOrgId } from '@monitor/testkit/builders';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { serviceUrl } from '@monitor/testkit/vitest';
import type { Database } from '../core/database.js';
import { createDatabase } from '../core/database.js';
import { isTransientDbError } from '../core/classify-db-error.js';
import { migrate } from '../schema/migrate.js';
import { cleanDatabase } from '../testing/clean-database.js';
import { pruneLateSampleWrites, readLateSampleWrites } from './late-sample-writes.js';
import { createSampleStore } from './sample-store.js';

const minuteMs = 60_000;
const hourMs = 60 * minuteMs;

describe.each(['postgres', 'timescale'] as const)('late sample writes on %s', (engine) => {
  let db: Database;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ db, dispose } = await cleanDatabase(engine, 'db_late_writes'));
    await migrate(db);
  });

  afterAll(async () => {
    await dispose?.();
  });

  /** Whether the transaction `xid` had committed for `snapshot`, as PostgreSQL decides it. */
  const visibleIn = async (xid: string, snapshot: string): Promise<boolean> => {
    const [row] = await db.sql<{ visible: boolean }[]>`
      select pg_visible_in_snapshot(${xid}::xid8, ${snapshot}::pg_snapshot) as visible`;
    return row!.visible;
  };

  it('records the hours of samples written over the late bound, in the transaction that wrote them', async () => {
    const nowMs = Date.now();
    const store = createSampleStore(db, { lateAfterMs: 5 * minuteMs, nowMs: () => nowMs });
    const orgId = uniqueOrgId();
    const fresh = buildHostSample({ orgId, host: 'h', timeMs: nowMs - minuteMs });
    await store.writeBatch({ samples: [fresh] });
    const lateMs = nowMs - 3 * hourMs;
    const lateHourMs = Math.floor(lateMs / hourMs) * hourMs;
    const before = await readLateSampleWrites(db, orgId, lateMs - hourMs, nowMs);
    expect(before.xids).toEqual([]);

    const late = [lateMs, lateMs + 1000].map((timeMs) =>
      buildHostSample({ orgId, host: 'h', timeMs }),
    );
    await store.writeBatch({ samples: late });
    const after = await readLateSampleWrites(db, orgId, lateMs, lateMs);
    expect(after.xids).toHaveLength(1);
    const [xid] = after.xids;
    // Not visible to what was read before the write; visible to what is read after it.
    expect(await visibleIn(xid!, before.snapshot)).toBe(false);
    expect(await visibleIn(xid!, after.snapshot)).toBe(true);
    const rows = await db.sql<{ hour_ms: string; n: number }[]>`
      select hour_ms::text, count(*)::int as n from late_sample_writes
      where org_id = ${orgId} group by hour_ms`;
    expect(rows).toEqual([{ hour_ms: String(lateHourMs), n: 1 }]);
    // Another organization's reads see none of it; nor do hours the write did not touch.
    expect((await readLateSampleWrites(db, uniqueOrgId(), lateMs, lateMs)).xids).toEqual([]);
    expect((await readLateSampleWrites(db, orgId, lateHourMs + hourMs, nowMs)).xids).toEqual([]);
  });

  /**
   * As the writer writes (its SampleSink): a batch that failed transiently is written again.
   * Two batches of the same new hosts may wait on each other's locks, and the server may then
   * abort one as a deadlock; what must never happen is both waiting for ever on the pool.
   */
  async function writeRetrying<T>(write: () => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      try {
        return await write();
      } catch (err) {
        if (!isTransientDbError(err) || attempt >= 5) throw err;
      }
    }
  }

  it('writes late batches side by side on a pool only as large as they need', async () => {
    // A batch takes two connections (its transaction, the services projection). Asking a third
    // while its transaction held its locks waited for ever once the other batch, waiting on
    // those locks, held the rest of the pool (found by bench:promql's load).
    const [row] = await db.sql<{ name: string }[]>`select current_database() as name`;
    const url = new URL(serviceUrl(engine));
    url.pathname = `/${row!.name}`;
    const small = createDatabase({ url: url.toString(), maxConnections: 3 });
    try {
      const nowMs = Date.now();
      const orgId = uniqueOrgId();
      // Rows enough for COPY, in an hour no chunk holds yet, of the same new hosts.
      const batchAt = (offsetMs: number) => ({
        samples: Array.from({ length: 1500 }, (_, i) =>
          buildHostSample({
            orgId,
            host: `side-${i % 40}`,
            timeMs: nowMs - 2 * 24 * hourMs + offsetMs + i * 1000,
            metrics: { cpu_usage: i, memory_usage: i / 2 },
          }),
        ),
      });
      for (let round = 0; round < 3; round++) {
        const stores = [0, 1].map(() =>
          createSampleStore(small, { lateAfterMs: 5 * minuteMs, nowMs: () => nowMs }),
        );
        const results = await Promise.all(
          stores.map((store, k) =>
            writeRetrying(() => store.writeBatch(batchAt(round * 4 * hourMs + k * 1_500_000))),
          ),
        );
        expect(results.map((r) => r.samplesWritten)).toEqual([3000, 3000]);
      }
    } finally {
      await small.close();
    }
  }, 60_000);

  it('prunes what was written more than its keep ago', async () => {
    const orgId = uniqueOrgId();
    await db.sql`
      insert into late_sample_writes (org_id, hour_ms, written_at)
      values (${orgId}, 0, now() - interval '2 days'), (${orgId}, ${hourMs}, now())`;
    await pruneLateSampleWrites(db, new Date(), 24 * hourMs);
    const rows = await db.sql<{ hour_ms: string }[]>`
      select hour_ms::text from late_sample_writes where org_id = ${orgId}`;
    expect(rows).toEqual([{ hour_ms: String(hourMs) }]);
  });
});
