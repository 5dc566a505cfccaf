// @services postgres timescale
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import { cleanDatabase } from '../testing/clean-database.js';
import { migrateWith } from './migrate.js';
import { migrations } from './migrations.js';

describe.each(['postgres', 'timescale'] as const)(
  'migration 21 (series labels, staleness markers) on %s',
  (engine) => {
    let db: Database;
    let dispose: () => Promise<void>;
    const t0 = Math.floor(Date.now() / 1000) * 1000 - 20 * 60_000;

    beforeAll(async () => {
      ({ db, dispose } = await cleanDatabase(engine, `series_labels_${engine}`));
      await migrateWith(
        db,
        migrations.filter((migration) => migration.version < 21),
      );
      // Series as version 20 stores them: one per (service, metric).
      await db.sql`
        insert into services (id, org_id, name, tags, last_seen)
        values ('svc_a', 'org_m', 'a', '{"env": "prod"}', ${new Date(t0)})
      `;
      await db.sql`
        with made as (
          insert into series (service_id, metric) values ('svc_a', 'cpu'), ('svc_a', 'mem')
          returning id
        )
        insert into samples (time, series_id, value) select ${new Date(t0)}, id, 1 from made
      `;
      // Up to the layout migration 24 replaces (its own test moves this one into it).
      const applied = await migrateWith(
        db,
        migrations.filter((migration) => migration.version < 24),
      );
      // 21 first, then the later versions before 24.
      expect(applied.applied.map((migration) => migration.version)[0]).toBe(21);
    });

    afterAll(async () => {
      await dispose?.();
    });

    it('keeps every series stored before, labelled by its service’s tags', async () => {
      const series = await db.sql<{ metric: string; labels: unknown; n: number }[]>`
        select r.metric, r.labels, count(s.*)::int as n
        from series r left join samples s on s.series_id = r.id
        group by r.id order by r.metric
      `;
      expect(series).toEqual([
        { metric: 'cpu', labels: null, n: 1 },
        { metric: 'mem', labels: null, n: 1 },
      ]);
    });

    it('holds one series per (service, metric, labels), no labels included', async () => {
      const [service] = await db.sql<{ id: string }[]>`select id from services`;
      const insert = (labels: string | null) => db.sql`
        insert into series (service_id, metric, labels) values (${service!.id}, 'cpu', ${labels}::text::jsonb)
      `;
      await insert('{"cpu": "0"}');
      await insert('{"cpu": "1", "mode": "idle"}');
      await expect(insert(null)).rejects.toMatchObject({ code: '23505' });
      // The same label set written in another order is the same series.
      await expect(insert('{"mode": "idle", "cpu": "1"}')).rejects.toMatchObject({
        code: '23505',
      });
      await expect(insert('["not", "an", "object"]')).rejects.toMatchObject({ code: '23514' });
    });

    it('makes the staleness markers’ table, one marker per series and time', async () => {
      const [series] = await db.sql<{ id: string }[]>`select id from series order by id limit 1`;
      const mark = () => db.sql`
        insert into stale_markers (series_id, time) values (${series!.id}, ${new Date(t0 + 1000)})
      `;
      await mark();
      await expect(mark()).rejects.toMatchObject({ code: '23505' });
    });
  },
);
