// @services postgres timescale
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import { cleanDatabase } from '../testing/clean-database.js';
import { migrate, migrateWith } from './migrate.js';
import { migrations } from './migrations.js';

describe.each(['postgres', 'timescale'] as const)(
  'migration 22 (series labels as written) on %s',
  (engine) => {
    let db: Database;
    let dispose: () => Promise<void>;

    /** Series as version 21 stored them, by protocol: [name, labels as stored]. */
    const stored: [string, Record<string, string> | null][] = [
      ['ingest', null],
      ['remote_write_instance', { instance: '10.0.0.1:9100', job: 'node' }],
      ['remote_write_host', { host: 'web-1', job: 'node' }],
      ['otlp', { 'service.name': 'web-1', region: 'eu' }],
      // Influx kept every tag but `host`; collectd kept none.
      ['influx', { cpu: 'cpu-total' }],
      ['collectd', {}],
    ];

    beforeAll(async () => {
      ({ db, dispose } = await cleanDatabase(engine, `series_labels_written_${engine}`));
      await migrateWith(
        db,
        migrations.filter((migration) => migration.version < 22),
      );
      await db.sql`
        insert into services (id, org_id, name, tags, last_seen)
        values ('svc_w', 'org_w', 'web-1', '{"env": "prod"}', now())
      `;
      for (const [metric, labels] of stored) {
        await db.sql`
          insert into series (service_id, metric, labels)
          values ('svc_w', ${metric}, ${labels === null ? null : JSON.stringify(labels)}::text::jsonb)
        `;
      }
      // An Influx series whose labels with `host` are those of a stored remote-write series.
      await db.sql`
        insert into series (service_id, metric, labels)
        values ('svc_w', 'both', '{"job": "node"}'), ('svc_w', 'both', '{"job": "node", "host": "web-1"}')
      `;
      const applied = await migrate(db);
      expect(applied.applied.map((migration) => migration.version)[0]).toBe(22);
    });

    afterAll(async () => {
      await dispose?.();
    });

    it('gives Influx and collectd series back the host they were written with, and no other', async () => {
      const rows = await db.sql<{ metric: string; labels: Record<string, string> | null }[]>`
        select metric, labels from series where metric <> 'both' order by id
      `;
      expect(rows).toEqual([
        { metric: 'ingest', labels: null },
        { metric: 'remote_write_instance', labels: { instance: '10.0.0.1:9100', job: 'node' } },
        { metric: 'remote_write_host', labels: { host: 'web-1', job: 'node' } },
        { metric: 'otlp', labels: { 'service.name': 'web-1', region: 'eu' } },
        { metric: 'influx', labels: { cpu: 'cpu-total', host: 'web-1' } },
        { metric: 'collectd', labels: { host: 'web-1' } },
      ]);
    });

    it('leaves a series that would read as another one of its service as it was', async () => {
      const rows = await db.sql<{ labels: Record<string, string> }[]>`
        select labels from series where metric = 'both' order by id
      `;
      expect(rows.map((row) => row.labels)).toEqual([
        { job: 'node' },
        { host: 'web-1', job: 'node' },
      ]);
    });
  },
);
