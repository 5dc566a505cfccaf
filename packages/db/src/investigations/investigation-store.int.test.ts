// @services postgres timescale
import { buildHostSample, uniqueOrgId } from '@monitor/testkit/builders';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import type { InvestigationReport } from '@monitor/schemas';
import type { InvestigationStore } from './investigation-store.js';
import type { EvidenceSample } from './investigation-store.js';
import {
  createInvestigationStore,
  defaultEvidenceLimits,
  evidenceBuckets,
} from './investigation-store.js';
import type { HostSample } from '../samples/sample-batch.js';
import { createSampleStore } from '../samples/sample-store.js';
import { sampleTimeColumn } from '../testing/sample-time.js';
import { migratedDatabase } from '../testing/clean-database.js';

const minuteMs = 60_000;
const claimOptions = { leaseMs: 60_000, maxAttempts: 3 };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const report: InvestigationReport = {
  findings: [
    {
      title: 'Likely cause: process burner',
      detail: 'burner grew',
      evidence: { cause: { kind: 'process', subject: 'burner' }, baseline: 1.5, firing: 75 },
    },
  ],
  analysis: {
    summary: 'cpu rose',
    root_cause: 'process burner (pid 42)',
    confidence: 0.91,
    method: 'statistical',
  },
  timeline: [
    {
      at: '2025-06-01T11:59:00.000Z',
      type: 'consumer_growth_began',
      description: 'burner grew',
      data: { pid: 42 },
    },
    { at: '2025-06-01T12:00:00.000Z', type: 'alert_started', description: 'breach', data: {} },
  ],
  recommendations: [{ title: 'Check burner', detail: 'renice it', priority: 'high' }],
};

describe('createInvestigationStore', () => {
  let db: Database;
  let dispose: () => Promise<void>;
  let store: InvestigationStore;
  const orgId = uniqueOrgId();

  async function queue(id: string, createdAgoMs = 0): Promise<void> {
    await db.sql`
      insert into investigations (id, org_id, alert_id, service_id, title, window_from, window_to,
        created_at)
      values (${id}, ${orgId}, ${`alr_${id}`}, 'svc_x', ${`title ${id}`},
        now() - interval '10 minutes', now() - interval '5 minutes',
        now() - ${createdAgoMs} * interval '1 millisecond')
    `;
  }

  async function row(id: string) {
    const [found] = await db.sql<
      {
        status: string;
        attempts: number;
        lease_until: Date | null;
        last_error: string | null;
        findings: unknown;
        analysis: unknown;
        timeline: unknown;
        recommendations: unknown;
        completed_at: Date | null;
      }[]
    >`select status, attempts, lease_until, last_error, findings, analysis, timeline,
        recommendations, completed_at
      from investigations where id = ${id}`;
    return found;
  }

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase('postgres', 'investigation_store'));
    store = createInvestigationStore(db);
  });

  afterAll(async () => {
    await dispose?.();
  });

  beforeEach(async () => {
    await db.sql`delete from investigations`;
  });

  describe('claim', () => {
    it('claims the oldest queued investigation: running, attempts 1, a lease', async () => {
      await queue('inv_new', 0);
      await queue('inv_old', 60_000);
      const claimed = await store.claim(claimOptions);
      expect(claimed).toMatchObject({
        id: 'inv_old',
        orgId,
        alertId: 'alr_inv_old',
        serviceId: 'svc_x',
        attempts: 1,
      });
      expect(claimed?.windowTo.getTime()).toBeGreaterThan(
        claimed?.windowFrom.getTime() ?? Infinity,
      );
      const stored = await row('inv_old');
      expect(stored).toMatchObject({ status: 'running', attempts: 1 });
      expect(stored?.lease_until?.getTime()).toBeGreaterThan(Date.now() + 50_000);
    });

    it('waits until the writer has stored what the evaluators had read, at most maxWaitMs', async () => {
      const evidence = { storageGroupId: 'writer', maxWaitMs: 60_000 };
      await queue('inv_waiting');
      const positions = [
        { topic: 'samples', partition: 0, next_offset: 10 },
        { topic: 'samples', partition: 1, next_offset: 5 },
      ];
      await db.sql`
        update investigations set evidence_positions = ${JSON.stringify(positions)}::text::jsonb
        where id = 'inv_waiting'`;
      await db.sql`delete from consumer_offsets`;
      await db.sql`
        insert into consumer_offsets (group_id, topic, partition, next_offset)
        values ('writer', 'samples', 0, 10), ('writer', 'samples', 1, 4),
          ('evaluator', 'samples', 1, 99)`;
      expect(await store.claim({ ...claimOptions, evidence })).toBeUndefined();
      // Without the wait it would be claimable: the positions alone hold it back.
      expect(await row('inv_waiting')).toMatchObject({ status: 'queued' });
      await db.sql`
        update consumer_offsets set next_offset = 5
        where group_id = 'writer' and partition = 1`;
      expect(await store.claim({ ...claimOptions, evidence })).toMatchObject({ id: 'inv_waiting' });

      // A writer that never catches up delays an investigation by maxWaitMs, not forever.
      await queue('inv_stuck', 61_000);
      await db.sql`
        update investigations set evidence_positions = ${JSON.stringify(positions)}::text::jsonb
        where id = 'inv_stuck'`;
      await db.sql`update consumer_offsets set next_offset = 0 where group_id = 'writer'`;
      expect(await store.claim({ ...claimOptions, evidence })).toMatchObject({ id: 'inv_stuck' });
    });

    it('is exclusive across concurrent claimers', async () => {
      await queue('inv_only');
      const results = await Promise.all([store.claim(claimOptions), store.claim(claimOptions)]);
      expect(results.filter((r) => r !== undefined).map((r) => r?.id)).toEqual(['inv_only']);
    });

    it('hands each of many investigations to exactly one of many claimers', async () => {
      for (let i = 0; i < 12; i++) await queue(`inv_${String(i).padStart(2, '0')}`, i * 1000);
      const claimed = await Promise.all(
        Array.from({ length: 16 }, () => store.claim(claimOptions)),
      );
      const ids = claimed.flatMap((c) => (c === undefined ? [] : [c.id]));
      expect(ids).toHaveLength(12);
      expect(new Set(ids).size).toBe(12);
    });

    it('reclaims a running investigation whose lease expired, fencing out the old claim', async () => {
      await queue('inv_crashed');
      const first = await store.claim({ leaseMs: 1, maxAttempts: 3 });
      await sleep(20);
      const second = await store.claim(claimOptions);
      expect(second).toMatchObject({ id: 'inv_crashed', attempts: 2 });
      expect(await store.complete(first!, report)).toBe(false);
      expect(
        await store.fail(first!, {
          error: 'late',
          retriable: true,
          retryDelayMs: 0,
          maxAttempts: 3,
        }),
      ).toBe('lost');
      expect(await store.complete(second!, report)).toBe(true);
    });

    it('renews the lease of a claim that holds, and not of one taken over', async () => {
      await queue('inv_long');
      const first = await store.claim({ leaseMs: 200, maxAttempts: 3 });
      expect(await store.renew(first!, 60_000)).toBe(true);
      await sleep(300);
      expect(await store.claim(claimOptions)).toBeUndefined();
      expect((await row('inv_long'))?.lease_until?.getTime()).toBeGreaterThan(Date.now() + 50_000);

      await db.sql`update investigations set lease_until = now() where id = 'inv_long'`;
      const second = await store.claim(claimOptions);
      expect(second).toMatchObject({ id: 'inv_long', attempts: 2 });
      expect(await store.renew(first!, 60_000)).toBe(false);
    });

    it('leaves a running investigation alone while its lease holds', async () => {
      await queue('inv_busy');
      await store.claim(claimOptions);
      expect(await store.claim(claimOptions)).toBeUndefined();
    });

    it('fails an expired lease that used up its attempts instead of running it again', async () => {
      await queue('inv_poison');
      for (let attempt = 1; attempt <= 2; attempt++) {
        expect(await store.claim({ leaseMs: 1, maxAttempts: 2 })).toMatchObject({
          attempts: attempt,
        });
        await sleep(20);
      }
      expect(await store.claim({ leaseMs: 1, maxAttempts: 2 })).toBeUndefined();
      expect(await row('inv_poison')).toMatchObject({
        status: 'failed',
        attempts: 2,
        lease_until: null,
      });
      expect((await row('inv_poison'))?.last_error).toContain('lease expired 2 times');
    });
  });

  it('complete stores the contract shapes and marks the investigation completed', async () => {
    await queue('inv_done');
    const claimed = await store.claim(claimOptions);
    expect(await store.complete(claimed!, report)).toBe(true);
    const stored = await row('inv_done');
    expect(stored).toMatchObject({
      status: 'completed',
      lease_until: null,
      findings: report.findings,
      analysis: report.analysis,
      timeline: report.timeline,
      recommendations: report.recommendations,
    });
    expect(stored?.completed_at).toBeInstanceOf(Date);
    const [types] = await db.sql<{ findings: string; analysis: string }[]>`
      select jsonb_typeof(findings) as findings, jsonb_typeof(analysis) as analysis
      from investigations where id = 'inv_done'
    `;
    expect(types).toEqual({ findings: 'array', analysis: 'object' });
  });

  describe('fail', () => {
    it('requeues a retriable failure, claimable only after the delay', async () => {
      await queue('inv_retry');
      const claimed = await store.claim(claimOptions);
      expect(
        await store.fail(claimed!, {
          error: 'db down',
          retriable: true,
          retryDelayMs: 300,
          maxAttempts: 3,
        }),
      ).toBe('queued');
      expect(await row('inv_retry')).toMatchObject({
        status: 'queued',
        attempts: 1,
        last_error: 'db down',
        completed_at: null,
      });
      expect(await store.claim(claimOptions)).toBeUndefined();
      await sleep(400);
      expect(await store.claim(claimOptions)).toMatchObject({ id: 'inv_retry', attempts: 2 });
    });

    it('fails for good after max attempts, and at once when not retriable', async () => {
      await queue('inv_tired');
      await queue('inv_broken', 1000);
      const broken = await store.claim(claimOptions);
      expect(
        await store.fail(broken!, {
          error: 'bug',
          retriable: false,
          retryDelayMs: 0,
          maxAttempts: 3,
        }),
      ).toBe('failed');
      let tired = await store.claim(claimOptions);
      for (let attempt = 1; attempt < 3; attempt++) {
        expect(
          await store.fail(tired!, {
            error: 'db down',
            retriable: true,
            retryDelayMs: 0,
            maxAttempts: 3,
          }),
        ).toBe('queued');
        tired = await store.claim(claimOptions);
      }
      expect(tired?.attempts).toBe(3);
      expect(
        await store.fail(tired!, {
          error: 'db down',
          retriable: true,
          retryDelayMs: 0,
          maxAttempts: 3,
        }),
      ).toBe('failed');
      expect(await row('inv_tired')).toMatchObject({ status: 'failed', last_error: 'db down' });
      expect((await row('inv_tired'))?.completed_at).toBeInstanceOf(Date);
      expect(await row('inv_broken')).toMatchObject({ status: 'failed', last_error: 'bug' });
    });
  });

  describe('loadEvidence', () => {
    const t0 = Math.floor(Date.now() / minuteMs) * minuteMs - 60 * minuteMs;
    const ids = new Map<string, string>();
    const idOf = (host: string) => ids.get(host) ?? '(missing)';
    const sample = (host: string, minute: number, fields: Partial<HostSample> = {}): HostSample =>
      buildHostSample({
        orgId,
        host,
        timeMs: t0 + minute * minuteMs,
        metrics: { cpu_percent: 10 + minute, memory_percent: 50 },
        tags: { service: host.startsWith('web') ? 'web' : 'db', region: 'eu' },
        ...fields,
      });

    async function insertAlert(
      id: string,
      host: string,
      ruleId: string,
      firedMinute: number,
      resolvedMinute: number | null,
    ) {
      await db.sql`
        insert into alerts (id, org_id, rule_id, rule_name, service_id, host, metric, condition,
          threshold, severity, status, value, started_at, fired_at, resolved_at)
        values (${id}, ${orgId}, ${ruleId}, 'cpu high', ${idOf(host)}, ${host}, 'cpu_percent',
          'greater_than', 80, 'critical', ${resolvedMinute === null ? 'active' : 'resolved'}, 90,
          ${new Date(t0 + firedMinute * minuteMs)}, ${new Date(t0 + firedMinute * minuteMs)},
          ${resolvedMinute === null ? null : new Date(t0 + resolvedMinute * minuteMs)})
      `;
    }

    beforeAll(async () => {
      const samples: HostSample[] = [];
      for (let minute = 0; minute < 30; minute++) {
        samples.push(
          sample('web-1', minute, {
            containers: [{ name: 'api', image: 'api:1', status: 'running' }],
            processes: [{ name: 'node', pid: 7, cpu_percent: minute }],
          }),
          sample('web-2', minute),
          sample('db-1', minute, { tags: { service: 'db', region: 'us' } }),
        );
      }
      samples.push(
        sample('other-org', 5, { orgId: `${orgId}_other`, tags: { service: 'web', region: 'eu' } }),
      );
      await createSampleStore(db).writeBatch({ samples });
      for (const r of await db.sql<{ id: string; name: string }[]>`
        select id, name from services where org_id = ${orgId}`) {
        ids.set(r.name, r.id);
      }
      await insertAlert('alr_old', 'web-1', 'rul_cpu', 2, 4);
      await insertAlert('alr_now', 'web-1', 'rul_cpu', 20, null);
      await insertAlert('alr_other_rule', 'web-1', 'rul_mem', 19, null);
      await insertAlert('alr_peer', 'web-2', 'rul_cpu', 15, null);
      await insertAlert('alr_peer_after', 'web-2', 'rul_mem', 21, null);
      await insertAlert('alr_peer_before', 'web-2', 'rul_cpu', 0, 1);
    });

    it('reads the service, its alert, samples, snapshots, rule history and peers in the range', async () => {
      const hostMetrics: string[][] = [];
      const evidence = await store.loadEvidence({
        orgId,
        serviceId: idOf('web-1'),
        alertId: 'alr_now',
        from: new Date(t0 + 10 * minuteMs),
        incidentFrom: new Date(t0 + 15 * minuteMs),
        to: new Date(t0 + 20 * minuteMs),
        historyFrom: new Date(t0),
        peerTagKeys: ['service', 'region'],
        maxPeers: 10,
        choosePeerMetrics: ({ alert, samples }) => {
          hostMetrics.push([...new Set(samples.map((s) => s.metric))].sort());
          return alert === undefined ? [] : [alert.metric];
        },
      });
      expect(hostMetrics).toEqual([['cpu_percent', 'memory_percent']]);
      expect(evidence.service).toEqual({
        id: idOf('web-1'),
        name: 'web-1',
        tags: { service: 'web', region: 'eu' },
      });
      expect(evidence.alert).toMatchObject({
        id: 'alr_now',
        ruleId: 'rul_cpu',
        metric: 'cpu_percent',
        threshold: 80,
      });
      expect(evidence.samples).toHaveLength(22);
      expect(evidence.samples[0]).toEqual({
        time: new Date(t0 + 10 * minuteMs),
        metric: 'cpu_percent',
        value: 20,
      });
      expect(evidence.snapshots).toHaveLength(11);
      expect(evidence.snapshots[10]).toEqual({
        time: new Date(t0 + 20 * minuteMs),
        containers: [{ name: 'api', image: 'api:1', status: 'running' }],
        processes: [{ name: 'node', pid: 7, cpu_percent: 20 }],
      });
      expect(evidence.ruleHistory.map((a) => a.id)).toEqual(['alr_old', 'alr_now']);
      expect(evidence.peers.map((p) => p.service.name)).toEqual(['web-2']);
      const [peer] = evidence.peers;
      expect(peer?.samples).toHaveLength(11);
      expect(new Set(peer?.samples.map((s) => s.metric))).toEqual(new Set(['cpu_percent']));
      expect(peer?.alerts.map((a) => a.id)).toEqual(['alr_peer']);
    });

    it('on demand reads the peer metrics chosen from the host samples and no rule history', async () => {
      const evidence = await store.loadEvidence({
        orgId,
        serviceId: idOf('web-1'),
        alertId: null,
        from: new Date(t0),
        incidentFrom: new Date(t0 + 10 * minuteMs),
        to: new Date(t0 + 29 * minuteMs),
        historyFrom: new Date(t0),
        peerTagKeys: ['region'],
        maxPeers: 10,
        choosePeerMetrics: () => ['memory_percent'],
      });
      expect(evidence.alert).toBeUndefined();
      expect(evidence.ruleHistory).toEqual([]);
      expect(evidence.peers[0]?.samples).toHaveLength(30);
      expect(new Set(evidence.peers[0]?.samples.map((s) => s.metric))).toEqual(
        new Set(['memory_percent']),
      );
    });

    it('rejects a service of another organization', async () => {
      await expect(
        store.loadEvidence({
          orgId: `${orgId}_other`,
          serviceId: idOf('web-1'),
          alertId: null,
          from: new Date(t0),
          incidentFrom: new Date(t0),
          to: new Date(t0 + minuteMs),
          historyFrom: new Date(t0),
          peerTagKeys: [],
          maxPeers: 10,
          choosePeerMetrics: () => [],
        }),
      ).rejects.toThrow(/not found/);
    });
  });
});

function seriesOf(samples: readonly EvidenceSample[]): Map<string, EvidenceSample[]> {
  const series = new Map<string, EvidenceSample[]>();
  for (const sample of samples)
    series.set(sample.metric, [...(series.get(sample.metric) ?? []), sample]);
  return series;
}

describe.each(['postgres', 'timescale'] as const)('loadEvidence over 7 days on %s', (engine) => {
  let db: Database;
  let dispose: () => Promise<void>;
  let store: InvestigationStore;
  const orgId = uniqueOrgId();
  const days = 7;
  // One sample a minute: 10,080 a series, several times the caps, and quick to store.
  const t0 = Math.floor(Date.now() / minuteMs) * minuteMs - days * 24 * 60 * minuteMs;
  const toMs = t0 + days * 24 * 60 * minuteMs;
  const incidentFromMs = t0 + 70 * minuteMs;
  const ids = new Map<string, string>();
  const idOf = (host: string) => ids.get(host) ?? '(missing)';
  const hosts = ['long-1', 'long-peer-1', 'long-peer-2'];
  const { pointsPerSeries, peerPointsPerSeries, snapshots } = defaultEvidenceLimits;

  function request(fromMs: number, incidentMs: number, lastMs: number, peerMetrics: string[]) {
    return {
      orgId,
      serviceId: idOf('long-1'),
      alertId: null,
      from: new Date(fromMs),
      incidentFrom: new Date(incidentMs),
      to: new Date(lastMs),
      historyFrom: new Date(lastMs - 24 * 60 * minuteMs),
      peerTagKeys: ['service'],
      maxPeers: 10,
      choosePeerMetrics: () => peerMetrics,
    };
  }

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase(engine, 'investigation_long'));
    store = createInvestigationStore(db);
    // One sample each through the store creates the services; the week goes in by SQL.
    await createSampleStore(db).writeBatch({
      samples: hosts.map((host) => ({
        orgId,
        host,
        timeMs: t0 - minuteMs,
        metrics: { cpu_percent: 0 },
        tags: { service: 'long' },
        containers: [],
        processes: [],
      })),
    });
    for (const r of await db.sql<{ id: string; name: string }[]>`
      select id, name from services where org_id = ${orgId}`) {
      ids.set(r.name, r.id);
    }
    // Each metric's value is the minute's index (plus an offset per metric), so a bucket's
    // mean is checkable from its first time and its width.
    await db.sql`
      insert into series (service_id, metric)
      select s.id, k.metric
      from unnest(${hosts.map(idOf)}::text[]) as s(id),
        (values ('cpu_percent'), ('memory_percent'), ('disk_used_percent')) as k(metric)
      union all
      select ${idOf('long-peer-1')}, 'peer_only'
      on conflict do nothing
    `;
    const { toColumn } = await sampleTimeColumn(db);
    const minute = toColumn(db.sql`${new Date(t0)}::timestamptz + m * interval '1 minute'`);
    await db.sql`
      insert into samples (time, series_id, value)
      select ${minute}, r.id, m + k.offset_value
      from generate_series(0, ${days * 24 * 60}) as m,
        (values ('cpu_percent', 0), ('memory_percent', 1000), ('disk_used_percent', 2000))
          as k(metric, offset_value)
        join series r on r.metric = k.metric
      where r.service_id = any(${hosts.map(idOf)}::text[])
    `;
    await db.sql`
      insert into samples (time, series_id, value)
      select ${minute}, r.id, m
      from generate_series(0, ${days * 24 * 60}) as m,
        series r
      where r.service_id = ${idOf('long-peer-1')} and r.metric = 'peer_only'
    `;
    await db.sql`
      insert into snapshots (time, service_id, containers, processes)
      select ${new Date(t0)}::timestamptz + m * interval '1 minute', ${idOf('long-1')},
        json_build_array(json_build_object('name', 'api', 'image', 'api:1', 'status', 'running')),
        json_build_array(json_build_object('name', 'node', 'pid', 7, 'cpu_percent', m))
      from generate_series(0, ${days * 24 * 60}) as m
    `;
  });

  afterAll(async () => {
    await dispose?.();
  });

  it('bounds the points of every series, the snapshots and the peer metrics', async () => {
    const evidence = await store.loadEvidence(
      request(t0, incidentFromMs, toMs, ['cpu_percent', 'memory_percent']),
    );
    const byMetric = seriesOf(evidence.samples);
    expect([...byMetric.keys()].sort()).toEqual([
      'cpu_percent',
      'disk_used_percent',
      'memory_percent',
    ]);
    for (const points of byMetric.values()) {
      expect(points.length).toBeLessThanOrEqual(pointsPerSeries);
      // Not thinned more than needed: the incident part gets at least a third of the cap.
      expect(points.length).toBeGreaterThan(pointsPerSeries / 3);
      // The baseline (70 minutes, 71 samples) fits its share: it stays raw.
      expect(points.filter((p) => p.time.getTime() < incidentFromMs)).toHaveLength(70);
    }
    const cpu = byMetric.get('cpu_percent') ?? [];
    expect(cpu[0]).toEqual({ time: new Date(t0), metric: 'cpu_percent', value: 0 });
    // A point is the mean of its bucket at the bucket's first time: minute i..i+n-1 → i+(n-1)/2.
    const { incidentMs } = evidenceBuckets({ fromMs: t0, incidentFromMs, toMs }, pointsPerSeries);
    const widthMinutes = incidentMs / minuteMs;
    for (const point of cpu) {
      const minute = (point.time.getTime() - t0) / minuteMs;
      expect(point.value).toBeGreaterThanOrEqual(minute);
      expect(point.value).toBeLessThan(minute + widthMinutes);
    }
    expect(cpu.at(-1)?.time.getTime()).toBeLessThanOrEqual(toMs);

    expect(evidence.snapshots.length).toBeLessThanOrEqual(snapshots);
    expect(evidence.snapshots.length).toBeGreaterThan(snapshots / 3);
    // The newest snapshot, the state at the end of the window, is among them.
    expect(evidence.snapshots.at(-1)).toEqual({
      time: new Date(toMs),
      containers: [{ name: 'api', image: 'api:1', status: 'running' }],
      processes: [{ name: 'node', pid: 7, cpu_percent: days * 24 * 60 }],
    });

    expect(evidence.peers.map((p) => p.service.name)).toEqual(['long-peer-1', 'long-peer-2']);
    for (const peer of evidence.peers) {
      const peerSeries = seriesOf(peer.samples);
      expect([...peerSeries.keys()].sort()).toEqual(['cpu_percent', 'memory_percent']);
      for (const points of peerSeries.values()) {
        expect(points.length).toBeLessThanOrEqual(peerPointsPerSeries);
      }
    }
  });

  it('reads a short window raw: every sample and snapshot as stored', async () => {
    const fromMs = toMs - 75 * minuteMs;
    const evidence = await store.loadEvidence(
      request(fromMs, toMs - 15 * minuteMs, toMs, ['cpu_percent']),
    );
    const raw = await db.sql<{ time: Date; metric: string; value: number }[]>`
      select timestamptz 'epoch' + s.time_ms * interval '1 millisecond' as time, r.metric, s.value
      from raw_samples(array(select id from series where service_id = ${idOf('long-1')}),
        ${fromMs}, ${toMs}) s
      join series r on r.id = s.series_id
      order by s.time_ms, r.metric
    `;
    expect(raw).toHaveLength(76 * 3);
    expect(evidence.samples).toEqual(
      raw.map(({ time, metric, value }) => ({ time, metric, value })),
    );
    expect(evidence.snapshots.map((s) => s.time)).toEqual(
      Array.from({ length: 76 }, (_, i) => new Date(fromMs + i * minuteMs)),
    );
    expect(evidence.peers[0]?.samples).toHaveLength(76);
  });
});
