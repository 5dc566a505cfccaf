// @services postgres timescale
import { randomBytes } from 'node:crypto';
import { buildHostSample, uniqueOrgId } from '@monitor/testkit/builders';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import { refreshRollups } from '../maintenance/run-maintenance.js';
import type { HostSample } from '../samples/sample-batch.js';
import { createSampleStore } from '../samples/sample-store.js';
import { migratedDatabase } from '../testing/clean-database.js';
import type { MetricBucketRow, ServiceQueries } from './service-queries.js';
import { createServiceQueries } from './service-queries.js';

const minuteMs = 60_000;
const hourMs = 60 * minuteMs;

function sample(
  overrides: Partial<HostSample> & Pick<HostSample, 'orgId' | 'host' | 'timeMs'>,
): HostSample {
  return buildHostSample({ metrics: { cpu_percent: 1 }, ...overrides });
}

/** What the aggregates must report for these raw points. */
function expectedBuckets(points: readonly [number, number][], stepMs: number): MetricBucketRow[] {
  const buckets = new Map<number, number[]>();
  for (const [timeMs, value] of points) {
    const start = Math.floor(timeMs / stepMs) * stepMs;
    buckets.set(start, [...(buckets.get(start) ?? []), value]);
  }
  return [...buckets.entries()]
    .sort(([a], [b]) => a - b)
    .map(([start, values]) => ({
      timeMs: start,
      avg: values.reduce((sum, v) => sum + v, 0) / values.length,
      min: Math.min(...values),
      max: Math.max(...values),
      count: values.length,
    }));
}

describe.each(['postgres', 'timescale'] as const)('service queries on %s', (engine) => {
  let db: Database;
  let dispose: () => Promise<void>;
  let queries: ServiceQueries;
  const now = new Date(Math.floor(Date.now() / minuteMs) * minuteMs + 30_000);
  const orgId = uniqueOrgId('org_a');
  const otherOrgId = uniqueOrgId('org_b');
  const ids = new Map<string, string>();
  const idOf = (host: string): string => ids.get(host) ?? '(missing)';

  async function insertAlert(fields: {
    service: string;
    severity: string;
    status: 'active' | 'resolved';
    firedAgoMs: number;
  }): Promise<string> {
    const id = `alr_${randomBytes(8).toString('hex')}`;
    const firedAt = new Date(now.getTime() - fields.firedAgoMs);
    await db.sql`
      insert into alerts (id, org_id, rule_id, rule_name, service_id, host, metric, condition,
        threshold, severity, status, value, started_at, fired_at, resolved_at)
      values (${id}, ${orgId}, ${`rul_${id}`}, 'cpu high', ${idOf(fields.service)},
        ${fields.service}, 'cpu_percent', 'greater_than', 90, ${fields.severity}, ${fields.status},
        95, ${firedAt}, ${firedAt}, ${fields.status === 'resolved' ? now : null})
    `;
    return id;
  }

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase(engine, 'service_queries'));
    queries = createServiceQueries(db, { staleAfterSeconds: 300 });
    const ago = (ms: number) => now.getTime() - ms;
    await createSampleStore(db).writeBatch({
      samples: [
        sample({
          orgId,
          host: 'web-1',
          timeMs: ago(3 * minuteMs),
          tags: { env: 'prod', region: 'eu' },
          containers: [{ name: 'old', status: 'exited' }],
        }),
        sample({
          orgId,
          host: 'web-1',
          timeMs: ago(minuteMs),
          metrics: { cpu_percent: 97, memory_percent: 40 },
          tags: { env: 'prod', region: 'eu' },
          containers: [{ name: 'api', image: 'api:1', status: 'running' }],
          processes: [{ name: 'node', pid: 7 }],
        }),
        sample({ orgId, host: 'web-2', timeMs: ago(2 * minuteMs), tags: { env: 'staging' } }),
        sample({ orgId, host: 'db-1', timeMs: ago(20 * minuteMs), tags: { env: 'prod' } }),
        sample({ orgId, host: 'api-1', timeMs: ago(10_000), tags: { env: 'prod' } }),
        sample({ orgId: otherOrgId, host: 'web-1', timeMs: ago(10_000), tags: { env: 'prod' } }),
      ],
    });
    const rows = await db.sql<{ id: string; name: string; org_id: string }[]>`
      select id, name, org_id from services where org_id in (${orgId}, ${otherOrgId})
    `;
    for (const row of rows) ids.set(row.org_id === orgId ? row.name : `other:${row.name}`, row.id);
  });

  afterAll(async () => {
    await dispose?.();
  });

  describe('listServices', () => {
    const names = (result: { services: { name: string }[] }) => result.services.map((s) => s.name);
    const list = (extra: Partial<Parameters<ServiceQueries['listServices']>[0]> = {}) =>
      queries.listServices({ orgId, limit: 50, offset: 0, now, ...extra });

    it('lists only the organization’s services, by name, with the total', async () => {
      const result = await list();
      expect(names(result)).toEqual(['api-1', 'db-1', 'web-1', 'web-2']);
      expect(result.total).toBe(4);
      expect(result.services[2]).toEqual({
        id: idOf('web-1'),
        name: 'web-1',
        status: 'healthy',
        lastSeen: new Date(now.getTime() - minuteMs),
        metrics: { cpu_percent: 97, memory_percent: 40 },
        tags: { env: 'prod', region: 'eu' },
      });
    });

    it('pages with limit and offset and reports the total past the end', async () => {
      expect(await list({ limit: 2, offset: 1 })).toMatchObject({
        services: [{ name: 'db-1' }, { name: 'web-1' }],
        total: 4,
      });
      expect(await list({ offset: 10 })).toEqual({ services: [], total: 4 });
    });

    it('derives the status from active alerts first, then staleness', async () => {
      const before = await list();
      expect(before.services.map((s) => [s.name, s.status])).toEqual([
        ['api-1', 'healthy'],
        ['db-1', 'stale'],
        ['web-1', 'healthy'],
        ['web-2', 'healthy'],
      ]);
      await insertAlert({ service: 'web-1', severity: 'warning', status: 'active', firedAgoMs: 0 });
      await insertAlert({
        service: 'web-1',
        severity: 'critical',
        status: 'active',
        firedAgoMs: 1,
      });
      await insertAlert({ service: 'web-2', severity: 'warning', status: 'active', firedAgoMs: 0 });
      await insertAlert({ service: 'web-2', severity: 'info', status: 'active', firedAgoMs: 0 });
      await insertAlert({
        service: 'db-1',
        severity: 'critical',
        status: 'resolved',
        firedAgoMs: 0,
      });
      await insertAlert({ service: 'api-1', severity: 'info', status: 'active', firedAgoMs: 0 });
      const after = await list();
      expect(after.services.map((s) => [s.name, s.status])).toEqual([
        ['api-1', 'healthy'],
        ['db-1', 'stale'],
        ['web-1', 'critical'],
        ['web-2', 'warning'],
      ]);
    });

    it('filters by status and by tags, counting only the matches', async () => {
      expect(await list({ status: 'critical' })).toMatchObject({
        services: [{ name: 'web-1' }],
        total: 1,
      });
      expect(names(await list({ status: 'stale' }))).toEqual(['db-1']);
      expect(names(await list({ tags: { env: 'prod' } }))).toEqual(['api-1', 'db-1', 'web-1']);
      expect(names(await list({ tags: { env: 'prod', region: 'eu' } }))).toEqual(['web-1']);
      expect(await list({ tags: { env: 'prod' }, status: 'healthy' })).toMatchObject({
        services: [{ name: 'api-1' }],
        total: 1,
      });
      expect(await list({ tags: { env: 'nowhere' } })).toEqual({ services: [], total: 0 });
    });
  });

  describe('getService', () => {
    it('adds the latest snapshot and the active alerts, newest first', async () => {
      const detail = await queries.getService({ orgId, id: idOf('web-1'), now });
      expect(detail).toMatchObject({
        name: 'web-1',
        status: 'critical',
        snapshot: {
          time: new Date(now.getTime() - minuteMs),
          containers: [{ name: 'api', image: 'api:1', status: 'running' }],
          processes: [{ name: 'node', pid: 7 }],
        },
      });
      expect(detail?.activeAlerts.map((a) => a.severity)).toEqual(['warning', 'critical']);
      expect(detail?.activeAlerts[0]).toMatchObject({
        serviceId: idOf('web-1'),
        host: 'web-1',
        status: 'active',
        threshold: 90,
        value: 95,
        resolvedAt: null,
        investigationId: null,
      });
    });

    it('has no snapshot for a host that never sent one; info alerts leave it healthy', async () => {
      const detail = await queries.getService({ orgId, id: idOf('api-1'), now });
      expect(detail).toMatchObject({
        status: 'healthy',
        snapshot: undefined,
        activeAlerts: [{ severity: 'info' }],
      });
    });

    it('does not find another organization’s service', async () => {
      expect(await queries.getService({ orgId, id: idOf('other:web-1'), now })).toBeUndefined();
      expect(await queries.getService({ orgId, id: 'svc_unknown', now })).toBeUndefined();
    });
  });

  describe('readMetricSeries', () => {
    const base = Math.floor(now.getTime() / minuteMs) * minuteMs;
    // Two points beyond the last hour, two in one minute 30 minutes ago, one in this minute.
    // All within 2 hours: TimescaleDB's refresh window (older ones the policy never sees).
    const points: [number, number][] = [
      [base - 110 * minuteMs, 5],
      [base - 90 * minuteMs, 7],
      [base - 30 * minuteMs, 1],
      [base - 30 * minuteMs + 10_000, 3],
      [base, 10],
    ];
    const from = new Date(Math.floor((base - 3 * hourMs) / hourMs) * hourMs);
    const to = new Date(base + minuteMs);
    const read = (step: '1m' | '1h', serviceOrg = orgId) =>
      queries.readMetricSeries({
        orgId: serviceOrg,
        serviceId: idOf('series'),
        metric: 'load',
        step,
        from,
        to: step === '1m' ? to : new Date(Math.ceil(to.getTime() / hourMs) * hourMs),
      });

    beforeAll(async () => {
      await createSampleStore(db).writeBatch({
        samples: points.map(([timeMs, value]) =>
          sample({ orgId, host: 'series', timeMs, metrics: { load: value, other: 0 } }),
        ),
      });
      const [row] = await db.sql<{ id: string }[]>`
        select id from services where org_id = ${orgId} and name = 'series'
      `;
      ids.set('series', row!.id);
    });

    it('sees every bucket before any refresh (real-time aggregation on both engines)', async () => {
      expect(await read('1m')).toEqual(expectedBuckets(points, minuteMs));
      expect(await read('1h')).toEqual(expectedBuckets(points, hourMs));
    });

    it('serves every bucket per minute and per hour once the rollups are refreshed', async () => {
      await refreshRollups(db, { now });
      expect(await read('1m')).toEqual(expectedBuckets(points, minuteMs));
      expect(await read('1h')).toEqual(expectedBuckets(points, hourMs));
    });

    it('keeps to the requested window and metric', async () => {
      const window = await queries.readMetricSeries({
        orgId,
        serviceId: idOf('series'),
        metric: 'load',
        step: '1m',
        from: new Date(base - 100 * minuteMs),
        to: new Date(base - 30 * minuteMs),
      });
      expect(window).toEqual(expectedBuckets([points[1]!], minuteMs));
      const unknown = await queries.readMetricSeries({
        orgId,
        serviceId: idOf('series'),
        metric: 'nothing',
        step: '1h',
        from,
        to,
      });
      expect(unknown).toEqual([]);
    });

    it('does not find another organization’s service', async () => {
      expect(await read('1m', otherOrgId)).toBeUndefined();
    });

    it('reads a metric an agent wrote under several label sets as its series together', async () => {
      // Within the last hour: late for the refresh done above, yet within its lookback.
      const recent = points.filter(([timeMs]) => timeMs >= base - 30 * minuteMs);
      const byCpu: [string, [number, number][]][] = [
        ['0', recent],
        ['1', recent.map(([timeMs, value]) => [timeMs + 1_000, value * 2 + 1])],
      ];
      await createSampleStore(db).writeBatch({
        samples: byCpu.flatMap(([cpu, series]) =>
          series.map(([timeMs, value]) =>
            sample({
              orgId,
              host: 'labelled',
              timeMs,
              metrics: { load: value },
              tags: { cpu },
              tagsLabelSeries: true,
            }),
          ),
        ),
      });
      // Late for the refresh done above: rolled up by the next one (an hour on: plain mode
      // refreshes a rollup once one of its buckets completed).
      await refreshRollups(db, { now: new Date(now.getTime() + hourMs) });
      const [row] = await db.sql<{ id: string }[]>`
        select id from services where org_id = ${orgId} and name = 'labelled'
      `;
      const all = byCpu.flatMap(([, series]) => series);
      for (const [step, stepMs] of [
        ['1m', minuteMs],
        ['1h', hourMs],
      ] as const) {
        const buckets = await queries.readMetricSeries({
          orgId,
          serviceId: row!.id,
          metric: 'load',
          step,
          from,
          to: new Date(Math.ceil((base + minuteMs) / hourMs) * hourMs),
        });
        expect(buckets).toEqual(expectedBuckets(all, stepMs));
      }
    });
  });
});
