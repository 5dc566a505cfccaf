// @services postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import { vacuumAnalyze } from '../maintenance/chunk-maintenance.js';
import { binarySampleChunks, readSampleTimeColumn } from '../samples/copy-binary.js';
import { scaleValues } from '../samples/sample-rows.js';
import { createSeriesScales } from '../samples/series-scales.js';
import { migratedDatabase } from '../testing/clean-database.js';
import {
  copyBinarySamples,
  ensureSeries,
  insertSeedAlerts,
  insertSeedServices,
  insertSeedSnapshots,
} from './bench-seeding.js';
import { explainServicesPage } from './explain-services-page.js';
import {
  countAlertsAndSnapshots,
  countAlertsNotNamed,
  countAlertsOfOtherRules,
  countDuplicateSamples,
  countEvaluatorStates,
  countFiredAlerts,
  countSamples,
  listAllServices,
  listHostValues,
  listRuleAlerts,
  readBackendPid,
  readCommittedRecords,
  readMaxValue,
} from './run-checks.js';

const orgId = 'org_seed';
const now = new Date('2026-11-25T12:00:00.000Z');
const iso = (minutesAgo: number) => new Date(now.getTime() - minutesAgo * 60_000).toISOString();

describe('bench seeding and run checks', () => {
  let db: Database;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase('postgres', 'db_bench_seeding'));
  });

  afterAll(async () => {
    await dispose?.();
  });

  it('seeds services, snapshots and alerts in one statement each, and counts them', async () => {
    const hosts = ['web-1', 'web-2', 'db-1'];
    await insertSeedServices(
      db,
      orgId,
      hosts.map((name, i) => ({
        id: `svc_${name}`,
        name,
        tagsJson: JSON.stringify({ role: name.split('-')[0] }),
        metricsJson: JSON.stringify(['cpu_percent']),
        metricTimesJson: JSON.stringify({ cpu_percent: iso(i) }),
        lastSeen: iso(i),
      })),
    );
    await insertSeedSnapshots(
      db,
      hosts.map((name, i) => ({
        time: iso(i),
        serviceId: `svc_${name}`,
        containersJson: '[]',
        processesJson: '[]',
      })),
    );
    await insertSeedAlerts(db, orgId, [
      alert('alt_1', 'rul_a', 'svc_web-1', 'web-1', 'resolved', 1),
      alert('alt_2', 'rul_a', 'svc_web-2', 'web-2', 'active', 2),
      alert('alt_3', 'rul_b', 'svc_db-1', 'db-1', 'active', 3),
    ]);
    await vacuumAnalyze(db, ['services', 'snapshots', 'alerts']);

    expect(await countAlertsAndSnapshots(db)).toEqual({ alerts: 3, snapshots: 3 });
    expect(await listAllServices(db)).toEqual([
      { id: 'svc_db-1', orgId, name: 'db-1' },
      { id: 'svc_web-1', orgId, name: 'web-1' },
      { id: 'svc_web-2', orgId, name: 'web-2' },
    ]);
    expect(await countFiredAlerts(db, ['rul_a'])).toEqual({ fired: 2, distinct: 2 });
    expect(await countAlertsOfOtherRules(db, ['rul_a'])).toBe(1);
    expect(await countAlertsNotNamed(db, 'rule rul_b')).toBe(2);
    const ruleB = await listRuleAlerts(db, 'rul_b');
    expect(ruleB.map((a) => ({ status: a.status, firedAt: a.firedAt.toISOString() }))).toEqual([
      { status: 'active', firedAt: iso(3) },
    ]);
    const page = await explainServicesPage(db, {
      orgId,
      limit: 2,
      offset: 0,
      now,
      staleAfterSeconds: 300,
    });
    expect(page.statement).toMatch(/from services/i);
    expect(page.plan.join('\n')).toMatch(/Execution Time/);
  });

  it("sums each consumer group's committed offsets of a topic, and counts evaluator states", async () => {
    await db.sql`
      insert into consumer_offsets (group_id, topic, partition, next_offset) values
        ('writer', 'samples', 0, 40), ('writer', 'samples', 1, 2),
        ('evaluator', 'samples', 0, 30), ('evaluator', 'other', 0, 7)
    `;
    expect(await readCommittedRecords(db, 'samples')).toEqual(
      new Map([
        ['writer', 42],
        ['evaluator', 30],
      ]),
    );
    expect(await countEvaluatorStates(db)).toBe(0);
  });

  it('copies samples as the writer does, and reads them back by host', async () => {
    const series = await ensureSeries(db, ['svc_web-1', 'svc_web-2'], ['seq', 'cpu_percent']);
    // Created once: a second call finds the same ids.
    expect(await ensureSeries(db, ['svc_web-1', 'svc_web-2'], ['seq', 'cpu_percent'])).toEqual(
      series,
    );
    const seqOf = (serviceId: string) => series.get(`${serviceId}\u0000seq`) ?? 0;
    const samples = {
      timesMs: [0, 1, 2, 0, 1].map((i) => now.getTime() + i * 1000),
      seriesIds: [1, 1, 1, 2, 2].map((n) => seqOf(n === 1 ? 'svc_web-1' : 'svc_web-2')),
      values: [0, 1, 2, 0, 1],
      mantissas: [] as number[],
      scales: [] as number[],
    };
    scaleValues(samples, createSeriesScales());
    await copyBinarySamples(db, binarySampleChunks(samples, 2, await readSampleTimeColumn(db)));

    expect(await countSamples(db)).toBe(5);
    expect(await countDuplicateSamples(db)).toBe(0);
    expect(await readMaxValue(db, 'web-1', 'seq')).toBe(2);
    expect(await readMaxValue(db, 'web-1', 'cpu_percent')).toBeNull();
    const values = await listHostValues(db, ['web-1', 'web-2'], 'seq');
    expect(values.map((v) => `${v.host}:${v.value}`).sort()).toEqual([
      'web-1:0',
      'web-1:1',
      'web-1:2',
      'web-2:0',
      'web-2:1',
    ]);
    expect(await readBackendPid(db)).toBeGreaterThan(0);
  });
});

function alert(
  id: string,
  ruleId: string,
  serviceId: string,
  host: string,
  status: 'active' | 'resolved',
  minutesAgo: number,
) {
  return {
    id,
    ruleId,
    ruleName: `rule ${ruleId}`,
    serviceId,
    host,
    severity: 'critical',
    status,
    value: 97,
    startedAt: iso(minutesAgo + 1),
    firedAt: iso(minutesAgo),
    resolvedAt: status === 'resolved' ? iso(0) : null,
  };
}
