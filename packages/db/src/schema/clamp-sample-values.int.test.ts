// @services postgres timescale
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import { storageEngine } from '../storage/engine.js';
import { migrations } from './migrations.js';
import { createSampleStore } from '../samples/sample-store.js';
import { migratedDatabase } from '../testing/clean-database.js';

/** The largest double: what an agent could store before values were bounded at the edge. */
const doubleMax = 1.7976931348623157e308;

describe.each(['postgres', 'timescale'] as const)('migration 15 on %s', (engine) => {
  let db: Database;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase(engine, `clamp_values_${engine}`));
  });

  afterAll(async () => {
    await dispose?.();
  });

  it('brings values stored beyond ±1e100 within the bound the edge now enforces', async () => {
    const timeMs = Date.now() - 10 * 60_000;
    await createSampleStore(db).writeBatch({
      samples: [
        {
          orgId: 'org_clamp',
          host: 'clamp-1',
          timeMs,
          metrics: { up: 0, down: 0, fine: 42 },
          tags: {},
          containers: [],
          processes: [],
        },
      ],
    });
    // Stored in `samples` before values were bounded (the store now keeps such values in
    // unaggregated_samples): set there directly.
    await db.sql`
      update samples s set value = case r.metric when 'up' then ${doubleMax}::float8
        else ${-doubleMax}::float8 end
      from series r where r.id = s.series_id and r.metric in ('up', 'down')
    `;
    const clamp = migrations.find((migration) => migration.version === 15);
    await db.sql.begin((tx) => clamp!.up(tx, { engine: storageEngine(engine) }));
    const rows = await db.sql<{ metric: string; value: number }[]>`
      select r.metric, sample_value(s.mantissa, s.scale, s.value) as value
      from samples s join series r on r.id = s.series_id order by r.metric`;
    expect(rows.map((row) => [row.metric, row.value])).toEqual([
      ['down', -1e100],
      ['fine', 42],
      ['up', 1e100],
    ]);
  });
});
