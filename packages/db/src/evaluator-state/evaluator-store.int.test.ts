// @services postgres
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { uniqueOrgId } from '@monitor/testkit/builders';
import type { Database } from '../core/database.js';
import type { AlertEvent, EvaluatorCommit, EvaluatorStore } from './evaluator-store.js';
import { createEvaluatorStore } from './evaluator-store.js';
import { migratedDatabase } from '../testing/clean-database.js';

const minuteMs = 60_000;
const t0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const at = (minutes: number): number => t0 + minutes * minuteMs;

describe('createEvaluatorStore', () => {
  let db: Database;
  let dispose: () => Promise<void>;
  let store: EvaluatorStore;
  let topic: string;
  const orgId = uniqueOrgId();

  async function insertRule(fields: {
    id: string;
    severity: 'critical' | 'warning' | 'info';
    channels: string[];
  }): Promise<void> {
    await db.sql`
      insert into alert_rules (id, org_id, name, metric, condition, threshold, duration_minutes,
        severity, channels)
      values (${fields.id}, ${orgId}, ${`${fields.id} high`}, 'cpu_percent', 'greater_than', 90,
        0, ${fields.severity}, ${db.sql.array(fields.channels)})
    `;
  }

  const fire = (host: string, ruleId: string, minutes: number, value = 95): AlertEvent => ({
    orgId,
    host,
    ruleId,
    type: 'fire',
    value,
    startedMs: at(minutes),
    firedMs: at(minutes),
  });
  const resolve = (host: string, ruleId: string, minutes: number): AlertEvent => ({
    orgId,
    host,
    ruleId,
    type: 'resolve',
    resolvedMs: at(minutes),
  });
  const flappingFire = (host: string, minutes: number): AlertEvent => ({
    ...(fire(host, 'rul_crit', minutes) as Extract<AlertEvent, { type: 'fire' }>),
    flapping: true,
  });
  const flappingResolve = (host: string, minutes: number): AlertEvent => ({
    ...(resolve(host, 'rul_crit', minutes) as Extract<AlertEvent, { type: 'resolve' }>),
    flapping: true,
  });
  const state = (host: string, ruleId: string, status: string, minutes: number) => ({
    orgId,
    host,
    ruleId,
    state: { v: 2, status, lastSampleMs: at(minutes), startedMs: at(minutes) },
  });
  /** Every rule of the test rows is at generation 0 (the column's default): nothing restarted. */
  const generations = (fields: Partial<Pick<EvaluatorCommit, 'states' | 'events' | 'cleared'>>) =>
    Object.fromEntries(
      [...(fields.states ?? []), ...(fields.events ?? []), ...(fields.cleared ?? [])].map(
        ({ ruleId }) => [ruleId, 0],
      ),
    );
  const commit = (
    fields: Partial<EvaluatorCommit> & Pick<EvaluatorCommit, 'fromOffset' | 'nextOffset'>,
  ) =>
    store.commit({
      partition: 0,
      states: [],
      cleared: [],
      watermarks: [],
      events: [],
      ruleGenerations: generations(fields),
      ...fields,
    });

  const loadStates = async (from: EvaluatorStore, hosts: { orgId: string; host: string }[]) =>
    (await from.loadHosts(hosts)).states;

  const count = async (
    table: 'alerts' | 'notifications' | 'investigations' | 'evaluator_states',
  ) => {
    const [row] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from ${db.sql(table)} where org_id = ${orgId}
    `;
    return row?.n ?? 0;
  };

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase('postgres', 'evaluator_store'));
    await db.sql`insert into organizations (id, name) values (${orgId}, 'acme')`;
    await insertRule({ id: 'rul_crit', severity: 'critical', channels: ['slack', 'email'] });
    await insertRule({ id: 'rul_info', severity: 'info', channels: [] });
  });

  beforeEach(() => {
    // A topic of its own per test, so each starts at offset 0.
    topic = `samples_${randomBytes(4).toString('hex')}`;
    store = createEvaluatorStore(db, { groupId: 'evaluator', topic });
  });

  afterAll(async () => {
    await dispose?.();
  });

  it('fires: alert row, outbox rows for the rule’s channels, an investigation, state and offset', async () => {
    expect(await store.appliedOffset(0)).toBe(0);
    const result = await commit({
      fromOffset: 0,
      nextOffset: 7,
      states: [state('fire-1', 'rul_crit', 'firing', 1)],
      events: [fire('fire-1', 'rul_crit', 1, 97.5)],
    });
    expect(result).toEqual({
      outcome: 'committed',
      fired: 1,
      alreadyActive: 0,
      resolved: 0,
      settled: 0,
      reset: [],
    });
    const [alert] = await db.sql<
      {
        id: string;
        status: string;
        value: number;
        fired_at: Date;
        investigation_id: string | null;
        rule_name: string;
      }[]
    >`select id, status, value, fired_at, investigation_id, rule_name from alerts where host = 'fire-1'`;
    expect(alert).toMatchObject({
      status: 'active',
      value: 97.5,
      fired_at: new Date(at(1)),
      rule_name: 'rul_crit high',
    });
    const notifications = await db.sql<
      { channel: string; transition: string; idempotency_key: string }[]
    >`
      select channel, transition, idempotency_key from notifications where alert_id = ${alert!.id}
      order by channel
    `;
    expect(notifications).toEqual([
      { channel: 'email', transition: 'fired', idempotency_key: `${alert!.id}:fired` },
      { channel: 'slack', transition: 'fired', idempotency_key: `${alert!.id}:fired` },
    ]);
    const [investigation] = await db.sql<{ id: string; status: string }[]>`
      select id, status from investigations where alert_id = ${alert!.id}
    `;
    expect(investigation).toEqual({ id: alert!.investigation_id, status: 'queued' });
    expect(await store.appliedOffset(0)).toBe(7);
    expect(await loadStates(store, [{ orgId, host: 'fire-1' }])).toEqual([
      state('fire-1', 'rul_crit', 'firing', 1),
    ]);
  });

  it('opens no investigation for an info alert', async () => {
    await commit({ fromOffset: 0, nextOffset: 1, events: [fire('info-1', 'rul_info', 1)] });
    const [row] = await db.sql<{ investigation_id: string | null }[]>`
      select investigation_id from alerts where host = 'info-1'
    `;
    expect(row).toEqual({ investigation_id: null });
  });

  it('resolves the active alert of the (rule, host) with its resolved notifications', async () => {
    await commit({ fromOffset: 0, nextOffset: 1, events: [fire('res-1', 'rul_crit', 1)] });
    const result = await commit({
      fromOffset: 1,
      nextOffset: 2,
      events: [resolve('res-1', 'rul_crit', 3)],
    });
    expect(result).toMatchObject({ outcome: 'committed', fired: 0, resolved: 1 });
    const rows = await db.sql<{ status: string; resolved_at: Date; transitions: string[] }[]>`
      select a.status, a.resolved_at,
        array(select n.transition || ':' || n.channel from notifications n where n.alert_id = a.id
          order by 1) as transitions
      from alerts a where host = 'res-1'
    `;
    expect(rows).toEqual([
      {
        status: 'resolved',
        resolved_at: new Date(at(3)),
        transitions: ['fired:email', 'fired:slack', 'resolved:email', 'resolved:slack'],
      },
    ]);
  });

  it('changes nothing for a replayed batch (the offset moved past it)', async () => {
    const batch = {
      fromOffset: 0,
      nextOffset: 3,
      states: [state('rep-1', 'rul_crit', 'firing', 1)],
      events: [fire('rep-1', 'rul_crit', 1)],
    };
    await commit(batch);
    const before = await Promise.all([
      count('alerts'),
      count('notifications'),
      count('investigations'),
    ]);
    expect(await commit(batch)).toEqual({ outcome: 'offset-moved', storedOffset: 3 });
    expect(
      await Promise.all([count('alerts'), count('notifications'), count('investigations')]),
    ).toEqual(before);
    expect(await store.appliedOffset(0)).toBe(3);
  });

  it('lets exactly one of two consumers racing over a partition apply a batch', async () => {
    const other = createEvaluatorStore(db, { groupId: 'evaluator', topic });
    const batch = {
      partition: 0,
      fromOffset: 0,
      nextOffset: 5,
      states: [],
      cleared: [],
      events: [fire('race-1', 'rul_crit', 1)],
      watermarks: [],
      ruleGenerations: { rul_crit: 0 },
    };
    const results = await Promise.all([store.commit(batch), other.commit(batch)]);
    expect(results.map((r) => r.outcome).sort()).toEqual(['committed', 'offset-moved']);
    const [row] = await db.sql<
      { n: number }[]
    >`select count(*)::int as n from alerts where host = 'race-1'`;
    expect(row?.n).toBe(1);
  });

  it('reports a fire that found an active alert (a lost checkpoint) without a second alert', async () => {
    await commit({ fromOffset: 0, nextOffset: 1, events: [fire('dup-1', 'rul_crit', 1)] });
    const again = createEvaluatorStore(db, { groupId: 'evaluator', topic: `${topic}_b` });
    const result = await again.commit({
      partition: 0,
      fromOffset: 0,
      nextOffset: 1,
      states: [],
      cleared: [],
      events: [fire('dup-1', 'rul_crit', 1)],
      watermarks: [],
      ruleGenerations: { rul_crit: 0 },
    });
    expect(result).toMatchObject({ fired: 0, alreadyActive: 1 });
    const [row] = await db.sql<
      { n: number }[]
    >`select count(*)::int as n from alerts where host = 'dup-1'`;
    expect(row?.n).toBe(1);
  });

  it('keeps states across store instances and offsets per partition', async () => {
    await commit({
      fromOffset: 0,
      nextOffset: 4,
      states: [state('keep-1', 'rul_crit', 'pending', 2)],
    });
    await store.commit({
      partition: 1,
      fromOffset: 0,
      nextOffset: 9,
      states: [],
      cleared: [],
      events: [],
      watermarks: [],
      ruleGenerations: {},
    });
    const restarted = createEvaluatorStore(db, { groupId: 'evaluator', topic });
    expect(await restarted.appliedOffset(0)).toBe(4);
    expect(await restarted.appliedOffset(1)).toBe(9);
    expect(await restarted.appliedOffset(2)).toBe(0);
    expect(
      await loadStates(restarted, [
        { orgId, host: 'keep-1' },
        { orgId, host: 'nobody' },
      ]),
    ).toEqual([state('keep-1', 'rul_crit', 'pending', 2)]);
  });

  describe('with a rule deleted or disabled', () => {
    beforeAll(async () => {
      await insertRule({ id: 'rul_gone', severity: 'warning', channels: ['webhook'] });
      await insertRule({ id: 'rul_off', severity: 'warning', channels: [] });
    });

    it('resets the window of a fire whose rule is gone, and writes no alert', async () => {
      await db.sql`update alert_rules set deleted_at = now(), revision = nextval('alert_rule_revisions') where id = 'rul_gone'`;
      const result = await commit({
        fromOffset: 0,
        nextOffset: 2,
        states: [
          state('gone-1', 'rul_gone', 'firing', 1),
          state('gone-1', 'rul_crit', 'pending', 1),
        ],
        events: [fire('gone-1', 'rul_gone', 1)],
      });
      expect(result).toEqual({
        outcome: 'committed',
        fired: 0,
        alreadyActive: 0,
        resolved: 0,
        settled: 0,
        reset: [{ orgId, host: 'gone-1', ruleId: 'rul_gone' }],
      });
      const [row] = await db.sql<
        { n: number }[]
      >`select count(*)::int as n from alerts where host = 'gone-1'`;
      expect(row?.n).toBe(0);
      expect((await loadStates(store, [{ orgId, host: 'gone-1' }])).map((s) => s.ruleId)).toEqual([
        'rul_crit',
      ]);
    });

    it('stores no state of a disabled rule and drops the orphaned ones', async () => {
      await commit({
        fromOffset: 0,
        nextOffset: 1,
        states: [state('off-1', 'rul_off', 'pending', 1)],
      });
      // A state that outlived its rule (written before the change).
      await db.sql`
        insert into evaluator_states (org_id, host, rule_id, state)
        values (${orgId}, 'off-2', 'rul_off', '{}'), (${orgId}, 'off-3', 'rul_deleted_long_ago', '{}')
      `;
      await db.sql`update alert_rules set enabled = false, revision = nextval('alert_rule_revisions') where id = 'rul_off'`;
      const result = await commit({
        fromOffset: 1,
        nextOffset: 2,
        states: [state('off-1', 'rul_off', 'pending', 2)],
      });
      expect(result).toMatchObject({ reset: [{ orgId, host: 'off-1', ruleId: 'rul_off' }] });
      // Neither stored nor deleted: rows of a rule that changed belong to the change (the rules
      // API deletes them, or a replica that knew first wrote them for the new generation).
      expect(await loadStates(store, [{ orgId, host: 'off-1' }])).toEqual([
        state('off-1', 'rul_off', 'pending', 1),
      ]);
      const live = await count('evaluator_states');
      expect(await store.dropOrphanStates()).toBe(3);
      expect(await count('evaluator_states')).toBe(live - 3);
      expect(await store.dropOrphanStates()).toBe(0);
    });
  });

  it('stores thousands of states and events in one commit', async () => {
    const hosts = Array.from({ length: 3000 }, (_, i) => `bulk-${i}`);
    const result = await commit({
      fromOffset: 0,
      nextOffset: 3000,
      states: hosts.map((host) => state(host, 'rul_info', 'firing', 1)),
      events: hosts.slice(0, 200).map((host) => fire(host, 'rul_info', 1)),
    });
    expect(result).toMatchObject({ outcome: 'committed', fired: 200 });
    const loaded = await loadStates(
      store,
      hosts.map((host) => ({ orgId, host })),
    );
    expect(loaded).toHaveLength(3000);
    await commit({
      fromOffset: 3000,
      nextOffset: 3001,
      cleared: hosts.map((host) => ({ orgId, host, ruleId: 'rul_info' })),
    });
    expect(
      await loadStates(
        store,
        hosts.map((host) => ({ orgId, host })),
      ),
    ).toEqual([]);
  });

  it('drops what was evaluated under an older generation of the rule: no alert, no state', async () => {
    await insertRule({ id: 'rul_gen', severity: 'critical', channels: [] });
    // The rules API restarted the rule's evaluation after the batch was evaluated.
    await db.sql`update alert_rules set generation = 5 where id = 'rul_gen'`;
    const result = await commit({
      fromOffset: 0,
      nextOffset: 2,
      events: [fire('gen-1', 'rul_gen', 1)],
      states: [state('gen-2', 'rul_gen', 'pending', 1)],
      ruleGenerations: { rul_gen: 0 },
    });
    expect(result).toMatchObject({ outcome: 'committed', fired: 0 });
    expect(result.outcome === 'committed' && result.reset.map((key) => key.host).sort()).toEqual([
      'gen-1',
      'gen-2',
    ]);
    const [alerts] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from alerts where rule_id = 'rul_gen'`;
    const [states] = await db.sql<{ n: number }[]>`
      select count(*)::int as n from evaluator_states where rule_id = 'rul_gen'`;
    expect([alerts?.n, states?.n]).toEqual([0, 0]);
    // Evaluated under the current generation, the same batch fires.
    const current = await commit({
      fromOffset: 2,
      nextOffset: 3,
      events: [fire('gen-1', 'rul_gen', 2)],
      ruleGenerations: { rul_gen: 5 },
    });
    expect(current).toMatchObject({ outcome: 'committed', fired: 1 });
  });

  it('deletes the rows of cleared windows (ok again) in the commit, and only those', async () => {
    await commit({
      fromOffset: 0,
      nextOffset: 1,
      states: [state('clr-1', 'rul_crit', 'pending', 1), state('clr-1', 'rul_info', 'firing', 1)],
    });
    const result = await commit({
      fromOffset: 1,
      nextOffset: 2,
      cleared: [
        { orgId, host: 'clr-1', ruleId: 'rul_crit' },
        { orgId, host: 'clr-2', ruleId: 'rul_crit' },
      ],
    });
    expect(result).toMatchObject({ outcome: 'committed', reset: [] });
    expect(await loadStates(store, [{ orgId, host: 'clr-1' }])).toEqual([
      state('clr-1', 'rul_info', 'firing', 1),
    ]);
    expect(await store.appliedOffset(0)).toBe(2);
  });

  it('loads every stored window of the hosts asked for, and none of other hosts or organizations', async () => {
    await db.sql`insert into organizations (id, name) values (${`${orgId}_b`}, 'other')`;
    await commit({
      fromOffset: 0,
      nextOffset: 1,
      states: [
        state('load-1', 'rul_crit', 'pending', 1),
        state('load-1', 'rul_info', 'firing', 2),
        state('load-2', 'rul_crit', 'pending', 3),
      ],
    });
    await db.sql`
      insert into evaluator_states (org_id, host, rule_id, state)
      values (${`${orgId}_b`}, 'load-1', 'rul_crit', '{}')
    `;
    const loaded = await loadStates(store, [
      { orgId, host: 'load-1' },
      { orgId, host: 'load-3' },
    ]);
    expect(loaded.sort((a, b) => a.ruleId.localeCompare(b.ruleId))).toEqual([
      state('load-1', 'rul_crit', 'pending', 1),
      state('load-1', 'rul_info', 'firing', 2),
    ]);
  });

  it('stores, replaces and loads host watermarks with the batch, and none when the offset moved', async () => {
    const marks = (minutes: number) => ({ v: 1, groups: [['cpu_percent', '', at(minutes), 3]] });
    await commit({
      fromOffset: 0,
      nextOffset: 1,
      watermarks: [
        { orgId, host: 'wm-1', marks: marks(1) },
        { orgId, host: 'wm-2', marks: marks(2) },
      ],
    });
    await commit({
      fromOffset: 1,
      nextOffset: 2,
      watermarks: [{ orgId, host: 'wm-1', marks: marks(5) }],
    });
    expect(
      await commit({
        fromOffset: 1,
        nextOffset: 2,
        watermarks: [{ orgId, host: 'wm-2', marks: marks(9) }],
      }),
    ).toEqual({ outcome: 'offset-moved', storedOffset: 2 });
    const loaded = await store.loadHosts([
      { orgId, host: 'wm-1' },
      { orgId, host: 'wm-2' },
      { orgId, host: 'wm-3' },
    ]);
    expect(loaded.watermarks.sort((a, b) => a.host.localeCompare(b.host))).toEqual([
      { orgId, host: 'wm-1', marks: marks(5) },
      { orgId, host: 'wm-2', marks: marks(2) },
    ]);
  });
  it('holds the notifications of a flapping (rule, host), marks its alerts, then sends one settled message', async () => {
    const notifications = async (host: string) =>
      await db.sql<{ transition: string; channel: string; sequence: number; key: string }[]>`
        select n.transition, n.channel, n.sequence, n.idempotency_key as key
        from notifications n join alerts a on a.id = n.alert_id
        where a.org_id = ${orgId} and a.host = ${host}
        order by a.fired_at, n.transition, n.channel
      `;
    const alertsOf = async (host: string) =>
      await db.sql<{ id: string; status: string; flapping: boolean; reason: string }[]>`
        select id, status, flapping, reason from alerts
        where org_id = ${orgId} and host = ${host} order by fired_at
      `;
    await commit({
      fromOffset: 0,
      nextOffset: 1,
      events: [
        fire('flap-1', 'rul_crit', 0),
        resolve('flap-1', 'rul_crit', 1),
        flappingFire('flap-1', 2),
        flappingResolve('flap-1', 3),
        flappingFire('flap-1', 4),
      ],
    });
    const [first, second, third] = await alertsOf('flap-1');
    expect([first, second, third].map((a) => [a?.status, a?.flapping, a?.reason])).toEqual([
      ['resolved', false, 'threshold'],
      ['resolved', true, 'threshold'],
      ['active', true, 'threshold'],
    ]);
    // Only the changes before it was flapping were notified.
    expect((await notifications('flap-1')).map((n) => [n.transition, n.channel])).toEqual([
      ['fired', 'email'],
      ['fired', 'slack'],
      ['resolved', 'email'],
      ['resolved', 'slack'],
    ]);
    const settled = await commit({
      fromOffset: 1,
      nextOffset: 2,
      events: [
        {
          orgId,
          host: 'flap-1',
          ruleId: 'rul_crit',
          type: 'settle',
          settledMs: at(20),
          firing: true,
        },
      ],
    });
    expect(settled).toMatchObject({ outcome: 'committed', settled: 1 });
    expect((await alertsOf('flap-1'))[2]).toMatchObject({ status: 'active', flapping: false });
    const afterSettle = (await notifications('flap-1')).filter((n) => n.transition === 'settled');
    expect(afterSettle).toEqual([
      { transition: 'settled', channel: 'email', sequence: 0, key: `${third!.id}:settled` },
      { transition: 'settled', channel: 'slack', sequence: 0, key: `${third!.id}:settled` },
    ]);
    // Settled while not firing: the latest alert says so; a second settle of it is numbered.
    await commit({
      fromOffset: 2,
      nextOffset: 3,
      events: [
        resolve('flap-1', 'rul_crit', 21),
        {
          orgId,
          host: 'flap-1',
          ruleId: 'rul_crit',
          type: 'settle',
          settledMs: at(40),
          firing: false,
        },
      ],
    });
    expect(
      (await notifications('flap-1'))
        .filter((n) => n.transition === 'settled' && n.channel === 'slack')
        .map((n) => n.key),
    ).toEqual([`${third!.id}:settled`, `${third!.id}:settled:1`]);
  });
  describe('no data', () => {
    const seenAt = at(100);
    const noDataRule = (ruleId: string, state: 'alerting' | 'ok' | 'keep') => ({
      orgId,
      ruleId,
      metric: 'cpu_percent',
      scope: { env: 'prod' },
      noDataMinutes: 2,
      noDataState: state,
      generation: 0,
    });
    const seen = (host: string, ruleIds: string[], minutes = 100, env = 'prod') => ({
      orgId,
      host,
      metric: 'cpu_percent',
      tags: { env },
      sampleMs: at(minutes),
      ruleIds,
    });
    const alertsOf = async (host: string) =>
      await db.sql<
        {
          rule_id: string;
          status: string;
          reason: string;
          value: number | null;
          started_at: Date;
          fired_at: Date;
          resolved_at: Date | null;
        }[]
      >`
        select rule_id, status, reason, value, started_at, fired_at, resolved_at from alerts
        where org_id = ${orgId} and host = ${host} order by fired_at, rule_id
      `;

    beforeAll(async () => {
      for (const [id, state] of [
        ['rul_nd_alerting', 'alerting'],
        ['rul_nd_ok', 'ok'],
        ['rul_nd_keep', 'keep'],
      ] as const) {
        await db.sql`
          insert into alert_rules (id, org_id, name, metric, condition, threshold,
            duration_minutes, severity, channels, scope, no_data_minutes, no_data_state)
          values (${id}, ${orgId}, ${id}, 'cpu_percent', 'greater_than', 90, 0, 'info',
            ${db.sql.array(['slack'])}, ${JSON.stringify({ env: 'prod' })}::text::jsonb, 2,
            ${state})
        `;
      }
    });

    it('fires one no-data alert per silence, however many sweeps and replicas, and a sample resolves it', async () => {
      const rules = [noDataRule('rul_nd_alerting', 'alerting'), noDataRule('rul_nd_keep', 'keep')];
      await commit({
        fromOffset: 0,
        nextOffset: 1,
        seen: [seen('quiet-1', ['rul_nd_alerting', 'rul_nd_keep'])],
        seenAtMs: seenAt,
      });
      expect(await store.sweepNoData({ nowMs: seenAt + 119_999, rules })).toEqual({
        fired: 0,
        resolved: 0,
      });
      // Two replicas sweeping at once, then again later: one alert.
      const other = createEvaluatorStore(db, { groupId: 'evaluator', topic });
      const swept = await Promise.all([
        store.sweepNoData({ nowMs: seenAt + 120_000, rules }),
        other.sweepNoData({ nowMs: seenAt + 120_000, rules }),
      ]);
      expect(swept.map((r) => r.fired).sort()).toEqual([0, 1]);
      expect(await store.sweepNoData({ nowMs: seenAt + 600_000, rules })).toEqual({
        fired: 0,
        resolved: 0,
      });
      expect(await alertsOf('quiet-1')).toEqual([
        {
          rule_id: 'rul_nd_alerting',
          status: 'active',
          reason: 'no_data',
          value: null,
          started_at: new Date(seenAt),
          fired_at: new Date(seenAt + 120_000),
          resolved_at: null,
        },
      ]);
      // A sample of the metric ends the silence: resolved at the sample's time (not before it fired).
      const result = await commit({
        fromOffset: 1,
        nextOffset: 2,
        seen: [seen('quiet-1', ['rul_nd_alerting', 'rul_nd_keep'], 103)],
        seenAtMs: seenAt + 660_000,
      });
      expect(result).toMatchObject({ outcome: 'committed', resolved: 1 });
      expect((await alertsOf('quiet-1')).map((a) => [a.status, a.resolved_at])).toEqual([
        ['resolved', new Date(at(103))],
      ]);
      // A new silence is a new episode.
      expect(await store.sweepNoData({ nowMs: seenAt + 780_000, rules })).toEqual({
        fired: 1,
        resolved: 0,
      });
    });

    it('leaves hosts out of the rule’s scope alone', async () => {
      const rules = [noDataRule('rul_nd_alerting', 'alerting')];
      await commit({
        fromOffset: 0,
        nextOffset: 1,
        seen: [seen('staging-1', ['rul_nd_alerting'], 100, 'staging')],
        seenAtMs: seenAt,
      });
      expect(await store.sweepNoData({ nowMs: seenAt + 600_000, rules })).toEqual({
        fired: 0,
        resolved: 0,
      });
      expect(await alertsOf('staging-1')).toEqual([]);
    });

    it('resolves the active alert with state ok, resets its window, and fences the batch evaluated before', async () => {
      const rules = [noDataRule('rul_nd_ok', 'ok')];
      await commit({
        fromOffset: 0,
        nextOffset: 1,
        states: [state('quiet-ok', 'rul_nd_ok', 'firing', 99)],
        events: [fire('quiet-ok', 'rul_nd_ok', 99)],
        seen: [seen('quiet-ok', ['rul_nd_ok'])],
        seenAtMs: seenAt,
      });
      const before = await store.appliedPosition(0);
      expect(await store.sweepNoData({ nowMs: seenAt + 120_000, rules })).toEqual({
        fired: 0,
        resolved: 1,
      });
      expect((await alertsOf('quiet-ok')).map((a) => [a.status, a.resolved_at])).toEqual([
        ['resolved', new Date(seenAt + 120_000)],
      ]);
      expect(await loadStates(store, [{ orgId, host: 'quiet-ok' }])).toEqual([]);
      const after = await store.appliedPosition(0);
      expect(after).toEqual({ nextOffset: before.nextOffset, revision: before.revision + 1 });
      // A batch evaluated against the window before the reset does not commit.
      expect(await commit({ fromOffset: 1, fromRevision: before.revision, nextOffset: 2 })).toEqual(
        { outcome: 'offset-moved', storedOffset: 1 },
      );
    });
  });
});
