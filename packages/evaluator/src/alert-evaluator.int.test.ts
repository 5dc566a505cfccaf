// @services postgres
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildSampleMessage, uniqueOrgId } from '@monitor/testkit/builders';
import type { BatchContext, RecordBatch } from '@monitor/bus';
import type { Database } from '@monitor/db';
import {
  createDatabase,
  createEvaluatorStore,
  createRuleStore,
  loadLiveRules,
  migrate,
  ruleSetFingerprint,
} from '@monitor/db';
import { createLogger } from '@monitor/platform';
import { encodeSampleMessage } from '@monitor/schemas';
import { serviceUrl } from '@monitor/testkit/vitest';
import type { AlertEvaluator } from './alert-evaluator.js';
import { createAlertEvaluator } from './alert-evaluator.js';
import type { RulePoller } from './rule-poller.js';
import { createRulePoller } from './rule-poller.js';

const logger = createLogger({ level: 'silent', name: 'test' });
const minuteMs = 60_000;
const t0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const at = (minutes: number): number => t0 + minutes * minuteMs;
const topic = 'metrics.samples.v1';
const ctx: BatchContext = { heartbeat: () => Promise.resolve(), isStale: () => false };
const noMetrics = {
  evaluated: () => undefined,
  alertsFired: () => undefined,
  alertsResolved: () => undefined,
  recordsSkipped: () => undefined,
  logRestarted: () => undefined,
};

describe('alert evaluator on PostgreSQL', () => {
  let admin: Database;
  let db: Database;
  let name: string;
  const orgId = uniqueOrgId();
  const pollers: RulePoller[] = [];
  const pollErrors: unknown[] = [];

  beforeAll(async () => {
    admin = createDatabase({ url: serviceUrl('postgres'), maxConnections: 1 });
    name = `evaluator_${randomBytes(4).toString('hex')}`;
    await admin.sql`create database ${admin.sql(name)}`;
    const url = new URL(serviceUrl('postgres'));
    url.pathname = `/${name}`;
    db = createDatabase({ url: url.toString(), maxConnections: 4 });
    await migrate(db);
    await db.sql`insert into organizations (id, name) values (${orgId}, 'acme')`;
  });

  afterAll(async () => {
    await Promise.all(pollers.map((p) => p.stop()));
    await db.close();
    await admin.sql`drop database if exists ${admin.sql(name)} with (force)`;
    await admin.close();
  });

  /** A replica: its own store, rule poller and evaluator over the shared database. */
  async function replica(): Promise<{ evaluator: AlertEvaluator; poller: RulePoller }> {
    const store = createEvaluatorStore(db, { groupId: 'evaluator', topic });
    const evaluator = createAlertEvaluator(
      {
        rules: {
          current: () => poller.current(),
          poll: () => poller.poll(),
          refresh: () => poller.refresh(),
        },
        store,
        deadLetters: { send: () => Promise.reject(new Error('no record is dead-lettered here')) },
        metrics: noMetrics,
        logger,
        clock: { nowMs: Date.now },
      },
      { maxCachedHostsPerPartition: 10_000 },
    );
    const poller = createRulePoller({
      fingerprint: () => ruleSetFingerprint(db),
      load: () => loadLiveRules(db),
      intervalMs: 60_000,
      onError: (err) => pollErrors.push(err),
      onChange: () => {
        evaluator.rulesRemoved().catch((err: unknown) => pollErrors.push(err));
      },
    });
    pollers.push(poller);
    await poller.start();
    return { evaluator, poller };
  }

  let nextOffset = 0;
  function batch(...samples: { host: string; minutes: number; cpu: number }[]): RecordBatch {
    return {
      topic,
      partition: 0,
      records: samples.map((sample) => ({
        topic,
        partition: 0,
        offset: String(nextOffset++),
        key: `${orgId}:${sample.host}`,
        value: encodeSampleMessage(
          buildSampleMessage({
            org_id: orgId,
            host: sample.host,
            time_ms: at(sample.minutes),
            metrics: { cpu_percent: sample.cpu },
            tags: { env: 'prod' },
          }),
        ),
        headers: {},
        timestampMs: 0,
      })),
      logEndOffset: nextOffset,
    };
  }

  const alerts = () =>
    db.sql<{ host: string; status: string; started_at: Date; fired_at: Date; value: number }[]>`
      select host, status, started_at, fired_at, value from alerts where org_id = ${orgId}
      order by fired_at
    `;

  it('resumes a window begun before a restart and fires at the right sample after it', async () => {
    await db.sql`
      insert into alert_rules (id, org_id, name, metric, condition, threshold, duration_minutes,
        severity, channels, scope)
      values ('rul_cpu', ${orgId}, 'cpu high', 'cpu_percent', 'greater_than', 90, 3, 'critical',
        ${db.sql.array(['slack'])}, ${'{"env":"prod"}'}::text::jsonb)
    `;
    const first = await replica();
    await first.evaluator.handleBatch(
      batch({ host: 'web-1', minutes: 0, cpu: 95 }, { host: 'web-1', minutes: 1, cpu: 96 }),
      ctx,
    );
    // Restart: a new process with nothing in memory.
    const second = await replica();
    await second.evaluator.handleBatch(batch({ host: 'web-1', minutes: 2.5, cpu: 97 }), ctx);
    expect(await alerts()).toEqual([]);
    await second.evaluator.handleBatch(batch({ host: 'web-1', minutes: 3, cpu: 98 }), ctx);
    expect(await alerts()).toEqual([
      {
        host: 'web-1',
        status: 'active',
        started_at: new Date(at(0)),
        fired_at: new Date(at(3)),
        value: 98,
      },
    ]);
  });

  it('stores a row only while a window is pending or firing', async () => {
    const { evaluator } = await replica();
    const rows = () =>
      db.sql<{ host: string; status: string }[]>`
        select host, state->>'status' as status from evaluator_states
        where org_id = ${orgId} and host like 'rows-%' order by host
      `;
    await evaluator.handleBatch(
      batch(
        { host: 'rows-1', minutes: 20, cpu: 95 },
        { host: 'rows-2', minutes: 20, cpu: 10 },
        { host: 'rows-3', minutes: 20, cpu: 10 },
      ),
      ctx,
    );
    expect(await rows()).toEqual([{ host: 'rows-1', status: 'pending' }]);
    await evaluator.handleBatch(
      batch({ host: 'rows-1', minutes: 21, cpu: 10 }, { host: 'rows-2', minutes: 21, cpu: 95 }),
      ctx,
    );
    expect(await rows()).toEqual([{ host: 'rows-2', status: 'pending' }]);
  });

  it('starts afresh after its rule was disabled and enabled again', async () => {
    const { evaluator, poller } = await replica();
    await evaluator.handleBatch(batch({ host: 'web-2', minutes: 10, cpu: 95 }), ctx);
    // The rules API disables the rule (and resolves its alerts in its own transaction).
    await db.sql`
      update alert_rules set enabled = false, revision = nextval('alert_rule_revisions')
      where id = 'rul_cpu'
    `;
    await db.sql`
      update alerts set status = 'resolved', resolved_at = now() where rule_id = 'rul_cpu'
    `;
    await poller.poll();
    await expect.poll(async () => (await db.sql`select 1 from evaluator_states`).length).toBe(0);
    await db.sql`
      update alert_rules set enabled = true, revision = nextval('alert_rule_revisions')
      where id = 'rul_cpu'
    `;
    await poller.poll();
    // Breaching since minute 10 before the disable: only 2 minutes of the new window so far.
    await evaluator.handleBatch(batch({ host: 'web-2', minutes: 12, cpu: 95 }), ctx);
    await evaluator.handleBatch(batch({ host: 'web-2', minutes: 14, cpu: 95 }), ctx);
    expect((await alerts()).filter((a) => a.host === 'web-2')).toEqual([]);
    await evaluator.handleBatch(batch({ host: 'web-2', minutes: 15, cpu: 95 }), ctx);
    expect((await alerts()).filter((a) => a.host === 'web-2')).toMatchObject([
      { status: 'active', started_at: new Date(at(12)), fired_at: new Date(at(15)) },
    ]);
    expect(pollErrors).toEqual([]);
  });

  it('keeps each rule’s own last sample across restarts, for a rule created later too', async () => {
    const first = await replica();
    await first.evaluator.handleBatch(batch({ host: 'ooo-1', minutes: 50, cpu: 10 }), ctx);
    const added = await createRuleStore(db).createRule(orgId, {
      name: 'cpu above half',
      metric: 'cpu_percent',
      condition: 'greater_than',
      threshold: 50,
      durationMinutes: 0,
      severity: 'warning',
      channels: [],
      scope: {},
      enabled: true,
    });
    // Older than rul_cpu's newest sample, but the new rule has evaluated nothing on the host.
    await (
      await replica()
    ).evaluator.handleBatch(batch({ host: 'ooo-1', minutes: 45, cpu: 40 }), ctx);
    const third = await replica();
    await third.evaluator.handleBatch(batch({ host: 'ooo-1', minutes: 44, cpu: 99 }), ctx);
    await third.evaluator.handleBatch(batch({ host: 'ooo-1', minutes: 47, cpu: 99 }), ctx);
    const fired = await db.sql<{ rule_id: string; fired_at: Date }[]>`
      select rule_id, fired_at from alerts where org_id = ${orgId} and host = 'ooo-1'
    `;
    expect(fired).toEqual([{ rule_id: added.id, fired_at: new Date(at(47)) }]);
    // A sample newer than every rule's: no row of its own is needed any more.
    await third.evaluator.handleBatch(batch({ host: 'ooo-1', minutes: 51, cpu: 10 }), ctx);
    expect(
      await db.sql`select rule_id from evaluator_states where org_id = ${orgId} and host = 'ooo-1'`,
    ).toEqual([]);
    expect(pollErrors).toEqual([]);
  });
});
