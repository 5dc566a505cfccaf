// @services postgres timescale
import { buildHostSample, uniqueOrgId } from '@monitor/testkit/builders';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import * as published from '../index.js';
import { migrate } from '../schema/migrate.js';
import { cleanDatabase } from '../testing/clean-database.js';
import type { HostSample } from './sample-batch.js';
import { createSampleStore } from './sample-store.js';

const minuteMs = 60_000;

function sample(
  overrides: Partial<HostSample> & Pick<HostSample, 'orgId' | 'host' | 'timeMs'>,
): HostSample {
  return buildHostSample({ metrics: { cpu_usage: 50, memory_usage: 60 }, ...overrides });
}

describe.each(['postgres', 'timescale'] as const)('the sample store on %s', (engine) => {
  let db: Database;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ db, dispose } = await cleanDatabase(engine, 'db_sample_store'));
    await migrate(db);
  });

  afterAll(async () => {
    await dispose?.();
  });

  const owner = { groupId: 'writer', topic: `samples-${engine}` };
  const samplesOfOrg = async (orgId: string): Promise<number> => {
    const [count] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from samples s join series r on r.id = s.series_id join services v on v.id = r.service_id
      where v.org_id = ${orgId}
    `;
    return count?.n ?? 0;
  };

  it('stores samples and snapshots and creates the service on its first sample', async () => {
    const store = createSampleStore(db);
    const orgId = uniqueOrgId();
    const t0 = Date.now() - 10 * minuteMs;
    const result = await store.writeBatch(
      {
        samples: [
          sample({
            orgId,
            host: 'web-1',
            timeMs: t0,
            metrics: { cpu_usage: 10, memory_usage: 20, 'disk.io:read-bytes': 30 },
            tags: { env: 'prod' },
            containers: [{ id: 'c1', name: 'api', status: 'running' }],
            processes: [{ pid: 1, name: 'node\t"quoted" \\ back' }],
            position: { partition: 0, offset: 0 },
          }),
          sample({ orgId, host: 'web-2', timeMs: t0, position: { partition: 1, offset: 0 } }),
        ],
      },
      owner,
    );
    expect(result).toEqual({
      samplesWritten: 5,
      duplicatesSkipped: 0,
      differentValuesDropped: 0,
      replaysSkipped: 0,
      partitionsRestarted: [],
      snapshotsWritten: 1,
      staleMarkersWritten: 0,
      exemplarsWritten: 0,
      histogramsWritten: 0,
      servicesCreated: 2,
    });

    const services = await db.sql`
      select id, name, tags, metrics, metric_times, last_seen from services
      where org_id = ${orgId} order by name
    `;
    expect(services.map((s) => s['name'] as string)).toEqual(['web-1', 'web-2']);
    const web1 = services[0]!;
    expect(web1['id']).toMatch(/^svc_[0-7][0-9A-HJKMNP-TV-Z]{25}$/);
    expect(web1['tags']).toEqual({ env: 'prod' });
    expect(web1['metrics']).toEqual({
      cpu_usage: 10,
      memory_usage: 20,
      'disk.io:read-bytes': 30,
    });
    expect(web1['metric_times']).toEqual({
      cpu_usage: t0,
      memory_usage: t0,
      'disk.io:read-bytes': t0,
    });
    expect((web1['last_seen'] as Date).getTime()).toBe(t0);

    const samples = await db.sql`
      select r.metric, s.value, s.time_ms
      from raw_samples(array(select id from series where service_id = ${web1['id'] as string}),
        0, ${t0}) s
      join series r on r.id = s.series_id
      order by r.metric
    `;
    expect(
      samples.map((s) => [s['metric'] as string, s['value'] as number, Number(s['time_ms'])]),
    ).toEqual([
      ['cpu_usage', 10, t0],
      ['disk.io:read-bytes', 30, t0],
      ['memory_usage', 20, t0],
    ]);
    const [snapshot] = await db.sql`
      select containers, processes from snapshots where service_id = ${web1['id'] as string}
    `;
    expect(snapshot).toEqual({
      containers: [{ id: 'c1', name: 'api', status: 'running' }],
      processes: [{ pid: 1, name: 'node\t"quoted" \\ back' }],
    });
  });

  it('moves last_seen only forward and replaces a metric only with a newer sample', async () => {
    const store = createSampleStore(db);
    const orgId = uniqueOrgId();
    const t0 = Date.now() - 30 * minuteMs;
    await store.writeBatch({
      samples: [
        sample({
          orgId,
          host: 'db-1',
          timeMs: t0,
          metrics: { cpu: 1, mem: 1 },
          tags: { v: '1' },
        }),
      ],
    });
    // An older sample (late arrival): stored as a sample, but changes nothing in the projection.
    await store.writeBatch({
      samples: [
        sample({
          orgId,
          host: 'db-1',
          timeMs: t0 - minuteMs,
          metrics: { cpu: 9, mem: 9, disk: 9 },
          tags: { v: 'old' },
        }),
      ],
    });
    let [row] =
      await db.sql`select tags, metrics, metric_times, last_seen from services where org_id = ${orgId}`;
    expect(row!['tags']).toEqual({ v: '1' });
    expect(row!['metrics']).toEqual({ cpu: 1, mem: 1, disk: 9 }); // a first value is taken
    expect((row!['last_seen'] as Date).getTime()).toBe(t0);

    // A newer sample of one metric: only that metric, last_seen and tags move.
    await store.writeBatch({
      samples: [
        sample({
          orgId,
          host: 'db-1',
          timeMs: t0 + minuteMs,
          metrics: { cpu: 2 },
          tags: { v: '2' },
        }),
      ],
    });
    // Within one batch the newest sample wins, whatever its place.
    await store.writeBatch({
      samples: [
        sample({
          orgId,
          host: 'db-1',
          timeMs: t0 + 3 * minuteMs,
          metrics: { mem: 3 },
          tags: { v: '3' },
        }),
        sample({
          orgId,
          host: 'db-1',
          timeMs: t0 + 2 * minuteMs,
          metrics: { mem: 2 },
          tags: { v: 'x' },
        }),
      ],
    });
    [row] =
      await db.sql`select tags, metrics, metric_times, last_seen from services where org_id = ${orgId}`;
    expect(row!['tags']).toEqual({ v: '3' });
    expect(row!['metrics']).toEqual({ cpu: 2, mem: 3, disk: 9 });
    expect(row!['metric_times']).toEqual({
      cpu: t0 + minuteMs,
      mem: t0 + 3 * minuteMs,
      disk: t0 - minuteMs,
    });
    expect((row!['last_seen'] as Date).getTime()).toBe(t0 + 3 * minuteMs);
  });

  it('fills in the tags of a service the evaluator created at the same instant', async () => {
    // An alert can fire on a host's first sample before the writer stores it: the evaluator
    // creates the service row (no tags, no metrics, last_seen = that sample's time). The
    // writer's batch of that same sample must still give the service its tags and metrics.
    const store = createSampleStore(db);
    const orgId = uniqueOrgId();
    const t0 = Date.now() - 10 * minuteMs;
    await db.sql`
      insert into services (id, org_id, name, last_seen)
      values (${`svc_first_${orgId}`}, ${orgId}, 'first-seen', ${new Date(t0)})
    `;
    await store.writeBatch({
      samples: [
        sample({
          orgId,
          host: 'first-seen',
          timeMs: t0,
          metrics: { cpu: 97 },
          tags: { role: 'web' },
        }),
      ],
    });
    const [row] =
      await db.sql`select tags, metrics, last_seen from services where org_id = ${orgId}`;
    expect(row!['tags']).toEqual({ role: 'web' });
    expect(row!['metrics']).toEqual({ cpu: 97 });
    expect((row!['last_seen'] as Date).getTime()).toBe(t0);
  });

  it('stores a (service, metric, time) once, within a batch and across batches', async () => {
    const store = createSampleStore(db);
    const orgId = uniqueOrgId();
    const t0 = Date.now() - 20 * minuteMs;
    const resent = sample({
      orgId,
      host: 'h',
      timeMs: t0,
      metrics: { cpu: 5 },
      processes: [{ pid: 7 }],
    });
    const first = await store.writeBatch({ samples: [resent, resent] });
    expect(first).toMatchObject({ samplesWritten: 1, duplicatesSkipped: 1, snapshotsWritten: 1 });
    // An agent's retry: same sample, new log position. The plain insert of a small batch
    // meets the key and the batch falls back to ON CONFLICT DO NOTHING.
    const second = await store.writeBatch({
      samples: [resent, sample({ orgId, host: 'h', timeMs: t0 + 1000, metrics: { cpu: 6 } })],
    });
    expect(second).toMatchObject({
      samplesWritten: 1,
      duplicatesSkipped: 1,
      snapshotsWritten: 0,
    });
    expect(await samplesOfOrg(orgId)).toBe(2);
  });

  it('stores a resent sample once in a batch big enough to go in by COPY', async () => {
    const store = createSampleStore(db);
    const orgId = uniqueOrgId();
    const t0 = Date.now() - 25 * minuteMs;
    // 700 hosts × 3 metrics, 2,100 rows: more than the store inserts with its COMMIT.
    const fleet = (timeMs: number) =>
      Array.from({ length: 700 }, (_, i) =>
        sample({ orgId, host: `h${i}`, timeMs, metrics: { a: i, b: 1, c: 2 } }),
      );
    const resent = sample({ orgId, host: 'h0', timeMs: t0, metrics: { a: 0, b: 1, c: 2 } });
    expect(await store.writeBatch({ samples: fleet(t0) })).toMatchObject({
      samplesWritten: 2100,
      duplicatesSkipped: 0,
    });
    // The COPY meets the resent sample's keys, fails as a whole, and the batch goes in again.
    expect(await store.writeBatch({ samples: [resent, ...fleet(t0 + 1000)] })).toMatchObject({
      samplesWritten: 2100,
      duplicatesSkipped: 3,
    });
    expect(await samplesOfOrg(orgId)).toBe(4200);
  });

  it('keeps each tag set of an agent’s metric as a series of its own, beside the host’s /ingest series', async () => {
    const store = createSampleStore(db);
    const orgId = uniqueOrgId();
    const t0 = Date.now() - 15 * minuteMs;
    const labelled = (timeMs: number, le: string, value: number) =>
      sample({
        orgId,
        host: 'h',
        timeMs,
        metrics: { x_bucket: value },
        tags: { le, job: 'api' },
        tagsLabelSeries: true,
      });
    const result = await store.writeBatch({
      samples: [
        labelled(t0, '0.5', 1),
        labelled(t0, '+Inf', 2),
        // /ingest: same metric, same time, the host's tags.
        sample({ orgId, host: 'h', timeMs: t0, metrics: { x_bucket: 3 }, tags: { le: '1' } }),
        labelled(t0 + 1000, '0.5', 4),
      ],
    });
    expect(result).toMatchObject({ samplesWritten: 4, duplicatesSkipped: 0 });
    // Again, through a store with an empty cache: the series are found, not made twice.
    const again = await createSampleStore(db).writeBatch({
      samples: [labelled(t0, '+Inf', 2), labelled(t0 + 2000, '+Inf', 5)],
    });
    expect(again).toMatchObject({ samplesWritten: 1, duplicatesSkipped: 1 });
    const series = await db.sql<{ labels: Record<string, string> | null; n: number }[]>`
      select r.labels, count(s.*)::int as n
      from series r join services v on v.id = r.service_id
      left join samples s on s.series_id = r.id
      where v.org_id = ${orgId}
      group by r.id order by r.labels::text nulls last
    `;
    expect(series).toEqual([
      { labels: { job: 'api', le: '+Inf' }, n: 2 },
      { labels: { job: 'api', le: '0.5' }, n: 2 },
      { labels: null, n: 1 },
    ]);
  });

  it('stores staleness markers once, apart from the values, and never as a sign of life', async () => {
    const store = createSampleStore(db);
    const orgId = uniqueOrgId();
    const t0 = Date.now() - 15 * minuteMs;
    const gauge = (timeMs: number, metrics: Record<string, number>, stale?: string[]) =>
      sample({
        orgId,
        host: 'm',
        timeMs,
        metrics,
        tags: { job: 'node' },
        tagsLabelSeries: true,
        ...(stale === undefined ? {} : { staleMetrics: stale }),
      });
    const first = await store.writeBatch({
      samples: [
        gauge(t0, { up: 1, load: 2 }),
        gauge(t0 + 1000, {}, ['up', 'load']),
        // A host never stored: its markers end nothing and make no service.
        sample({
          orgId,
          host: 'gone',
          timeMs: t0,
          metrics: {},
          tagsLabelSeries: true,
          staleMetrics: ['up'],
        }),
      ],
    });
    expect(first).toMatchObject({
      samplesWritten: 2,
      staleMarkersWritten: 2,
      servicesCreated: 1,
    });
    const replayed = await store.writeBatch({ samples: [gauge(t0 + 1000, {}, ['up'])] });
    expect(replayed).toMatchObject({ samplesWritten: 0, staleMarkersWritten: 0 });
    // A marker of a series not seen yet (another tag set) makes it.
    const fresh = await createSampleStore(db, { method: 'insert' }).writeBatch({
      samples: [{ ...gauge(t0 + 2000, {}, ['up']), tags: { job: 'other' } }],
    });
    expect(fresh).toMatchObject({ staleMarkersWritten: 1, servicesCreated: 0 });
    const markers = await db.sql<{ metric: string; labels: unknown; time: Date }[]>`
      select r.metric, r.labels, m.time
      from stale_markers m join series r on r.id = m.series_id
      join services v on v.id = r.service_id
      where v.org_id = ${orgId}
      order by m.time, r.metric
    `;
    expect(markers.map((m) => [m.metric, m.labels, m.time.getTime()])).toEqual([
      ['load', { job: 'node' }, t0 + 1000],
      ['up', { job: 'node' }, t0 + 1000],
      ['up', { job: 'other' }, t0 + 2000],
    ]);
    const services = await db.sql<{ name: string; last_seen: Date }[]>`
      select name, last_seen from services where org_id = ${orgId}
    `;
    expect(services.map((v) => [v.name, v.last_seen.getTime()])).toEqual([['m', t0]]);
  });

  it('stores exemplars by series and time once, the first standing, beside the samples', async () => {
    const store = createSampleStore(db);
    const orgId = uniqueOrgId();
    // A log of its own: the other tests' offsets of the same partition are stored already.
    const exemplarOwner = { groupId: 'writer', topic: `exemplars-${engine}` };
    const t0 = Date.now() - 12 * minuteMs;
    const labelled = (timeMs: number, overrides: Partial<HostSample>): HostSample =>
      sample({
        orgId,
        host: 'api',
        timeMs,
        metrics: {},
        tags: { job: 'api' },
        tagsLabelSeries: true,
        ...overrides,
      });
    const first = await store.writeBatch(
      {
        samples: [
          labelled(t0, { metrics: { requests_total: 5 }, position: { partition: 0, offset: 0 } }),
          // Prometheus sends exemplars apart from their samples, at their own times.
          labelled(t0 - 300, {
            exemplars: [
              { metric: 'requests_total', value: 1, labels: { trace_id: 'a1', span_id: 'b1' } },
              // A series with an exemplar and no sample yet is made.
              { metric: 'latency_seconds_bucket', value: Number.NaN, labels: {} },
            ],
            position: { partition: 0, offset: 1 },
          }),
          // A host never stored: its exemplar waits for nothing, as a staleness marker would.
          { ...labelled(t0, { exemplars: [{ metric: 'x', value: 1, labels: {} }] }), host: 'gone' },
        ],
      },
      exemplarOwner,
    );
    expect(first).toMatchObject({ samplesWritten: 1, exemplarsWritten: 2, servicesCreated: 1 });
    // A replay of the same records, then the same exemplar again and another at its time.
    const replayed = await store.writeBatch(
      {
        samples: [
          labelled(t0 - 300, {
            exemplars: [{ metric: 'requests_total', value: 1, labels: { trace_id: 'a1' } }],
            position: { partition: 0, offset: 1 },
          }),
        ],
      },
      exemplarOwner,
    );
    expect(replayed).toMatchObject({ exemplarsWritten: 0, replaysSkipped: 1 });
    const resent = await createSampleStore(db, { method: 'insert' }).writeBatch({
      samples: [
        labelled(t0 - 300, {
          exemplars: [{ metric: 'requests_total', value: 9, labels: { trace_id: 'other' } }],
        }),
        labelled(t0 + 700, {
          exemplars: [{ metric: 'requests_total', value: 2, labels: { trace_id: 'a2' } }],
        }),
      ],
    });
    expect(resent).toMatchObject({ exemplarsWritten: 1 });
    const stored = await db.sql<
      { metric: string; labels: unknown; time: Date; value: number; exemplar: unknown }[]
    >`
      select r.metric, r.labels, e.time, e.value, e.labels as exemplar
      from exemplars e join series r on r.id = e.series_id
      join services v on v.id = r.service_id
      where v.org_id = ${orgId}
      order by e.time, r.metric
    `;
    expect(stored.map((e) => [e.metric, e.labels, e.time.getTime(), e.value, e.exemplar])).toEqual([
      ['latency_seconds_bucket', { job: 'api' }, t0 - 300, Number.NaN, {}],
      ['requests_total', { job: 'api' }, t0 - 300, 1, { trace_id: 'a1', span_id: 'b1' }],
      ['requests_total', { job: 'api' }, t0 + 700, 2, { trace_id: 'a2' }],
    ]);
  });

  it('stores snapshot JSON text as given, and refuses text that is not JSON for good', async () => {
    const store = published.createSampleStore(db);
    const orgId = uniqueOrgId();
    const t0 = Date.now() - 15 * minuteMs;
    await store.writeBatch({
      samples: [
        sample({ orgId, host: 'h', timeMs: t0, processes: { json: '[{"pid":7,"name":"a"}]' } }),
      ],
    });
    const [stored] = await db.sql<{ processes: unknown }[]>`
      select n.processes from snapshots n join services v on v.id = n.service_id
      where v.org_id = ${orgId}
    `;
    expect(stored?.processes).toEqual([{ pid: 7, name: 'a' }]);

    // What the writer's fast decode lets through unparsed must fail the batch as permanent
    // (so the writer isolates and dead-letters it), leaving nothing of it behind.
    const refused = await store
      .writeBatch({
        samples: [
          sample({ orgId, host: 'h', timeMs: t0 + 1000 }),
          sample({ orgId, host: 'h', timeMs: t0 + 2000, containers: { json: '[1,,2]' } }),
        ],
      })
      .then(
        () => undefined,
        (err: unknown) => err,
      );
    expect(refused).toBeInstanceOf(published.DatabaseRefusedError);
    expect(refused).toMatchObject({ retriable: false, sqlState: '22P02' });
    expect(await samplesOfOrg(orgId)).toBe(2);
  });

  it('analyzes services and series once it created a hundred services', async () => {
    const store = createSampleStore(db);
    const orgId = uniqueOrgId();
    const t0 = Date.now() - 12 * minuteMs;
    const hosts = Array.from({ length: 100 }, (_, i) => `fleet-${i}`);
    const result = await store.writeBatch({
      samples: hosts.map((host) => sample({ orgId, host, timeMs: t0 })),
    });
    expect(result.servicesCreated).toBe(100);
    // An analyze counts every row of tables this small: the planner's row counts are exact.
    const rows = await db.sql<{ relname: string; reltuples: number; rows: number }[]>`
      select c.relname, c.reltuples::int as reltuples,
        case c.relname when 'services' then (select count(*) from services)
                       else (select count(*) from series) end::int as rows
      from pg_class c
      where c.oid in ('services'::regclass, 'series'::regclass)
      order by c.relname
    `;
    expect(rows.map(({ relname, reltuples, rows: count }) => [relname, reltuples - count])).toEqual(
      [
        ['series', 0],
        ['services', 0],
      ],
    );
  });

  it('writes nothing new when the same offsets are replayed', async () => {
    const store = createSampleStore(db);
    const orgId = uniqueOrgId();
    const t0 = Date.now() - 15 * minuteMs;
    const replayOwner = { groupId: 'writer', topic: `replay-${engine}-${orgId}` };
    const batch = {
      samples: [0, 1, 2].map((offset) =>
        sample({
          orgId,
          host: 'r',
          timeMs: t0 + offset * 1000,
          position: { partition: 3, offset: 10 + offset },
        }),
      ),
      offsets: [{ partition: 4, nextOffset: 99 }],
    };
    const first = await store.writeBatch(batch, replayOwner);
    expect(first).toMatchObject({ samplesWritten: 6, replaysSkipped: 0, servicesCreated: 1 });
    const again = await store.writeBatch(batch, replayOwner);
    expect(again).toEqual({
      samplesWritten: 0,
      duplicatesSkipped: 0,
      differentValuesDropped: 0,
      replaysSkipped: 3,
      partitionsRestarted: [],
      snapshotsWritten: 0,
      staleMarkersWritten: 0,
      exemplarsWritten: 0,
      histogramsWritten: 0,
      servicesCreated: 0,
    });
    // A batch overlapping the stored offsets writes only what is new.
    const overlap = await store.writeBatch(
      {
        samples: [2, 3].map((offset) =>
          sample({
            orgId,
            host: 'r',
            timeMs: t0 + offset * 1000,
            position: { partition: 3, offset: 10 + offset },
          }),
        ),
      },
      replayOwner,
    );
    expect(overlap).toMatchObject({ samplesWritten: 2, replaysSkipped: 1 });
    const offsets = await db.sql`
      select partition, next_offset from consumer_offsets
      where group_id = ${replayOwner.groupId} and topic = ${replayOwner.topic} order by partition
    `;
    expect(offsets.map((o) => [o['partition'] as number, Number(o['next_offset'])])).toEqual([
      [3, 14],
      [4, 99],
    ]);
  });

  it('starts a partition afresh when its stored offset is past the end of the log it reads', async () => {
    const store = createSampleStore(db);
    const orgId = uniqueOrgId();
    const t0 = Date.now() - 15 * minuteMs;
    const owner = { groupId: 'writer', topic: `recreated-${engine}-${orgId}` };
    const at = (offset: number, logEndOffset: number) =>
      sample({
        orgId,
        host: 'recreated',
        timeMs: t0 + offset * 1000 + logEndOffset,
        position: { partition: 0, offset, logEndOffset },
      });
    await store.writeBatch({ samples: [at(500, 501)] }, owner);
    // The topic was deleted and created again: its offsets start at 0 again.
    const fresh = await store.writeBatch({ samples: [at(0, 2), at(1, 2)] }, owner);
    expect(fresh).toMatchObject({
      samplesWritten: 4,
      replaysSkipped: 0,
      partitionsRestarted: [0],
    });
    // From then on the new log's offsets are the stored ones: a replay is a replay again.
    const replay = await store.writeBatch({ samples: [at(1, 2)] }, owner);
    expect(replay).toMatchObject({ replaysSkipped: 1, partitionsRestarted: [] });
    const [row] = await db.sql`
      select next_offset from consumer_offsets
      where group_id = ${owner.groupId} and topic = ${owner.topic} and partition = 0
    `;
    expect(Number(row!['next_offset'])).toBe(2);
  });

  it('stores the same through INSERT … ON CONFLICT as through COPY', async () => {
    const store = createSampleStore(db, { method: 'insert' });
    const orgId = uniqueOrgId();
    const t0 = Date.now() - 12 * minuteMs;
    const s = sample({ orgId, host: 'i', timeMs: t0, containers: [{ id: 'x' }] });
    expect(await store.writeBatch({ samples: [s] })).toMatchObject({
      samplesWritten: 2,
      snapshotsWritten: 1,
    });
    expect(await store.writeBatch({ samples: [s] })).toMatchObject({
      samplesWritten: 0,
      duplicatesSkipped: 2,
    });
  });
});
