import { describe, expect, it } from 'vitest';
import type {
  RuleGroupAlertChanges,
  RuleGroupEvaluationRecord,
  RuleGroupForEvaluation,
  RuleGroupKey,
  RuleGroupStateStore,
  ScheduledRuleGroup,
} from '@monitor/db';
import { createLogger } from '@monitor/platform';
import type { RuleGroup, RuleGroupEvaluation, RuleGroupState } from '@monitor/rules';
import type { RuleGroupRef } from './rule-group-schedule.js';
import { ruleGroupSlotMs } from './rule-group-schedule.js';
import type { RuleGroupScheduler } from './rule-group-scheduler.js';
import { createRuleGroupScheduler } from './rule-group-scheduler.js';

const logger = createLogger({ level: 'silent', name: 'test' });
const ref = { orgId: 'org_1', namespace: 'ns', name: 'node' };
const defaultIntervalMs = 60_000;

function definition(interval: string | null, records: string[]): string {
  return [
    'name: node',
    ...(interval === null ? [] : [`interval: ${interval}`]),
    'rules:',
    ...records.map((r) => `- record: ${r}\n  expr: up`),
  ].join('\n');
}

/** The table, with the compare-and-set the real store does (a group's YAML is its revision). */
type SchedulerStore = Pick<
  RuleGroupStateStore,
  'listAllGroups' | 'loadGroup' | 'listGroupAlerts' | 'saveEvaluation'
>;

function fakeStore(): SchedulerStore & {
  groups: Map<string, string>;
  states: Map<string, RuleGroupEvaluationRecord>;
  /** The alert changes of every save that succeeded. */
  alertChanges: RuleGroupAlertChanges[];
} {
  const id = (k: RuleGroupKey): string => `${k.orgId}/${k.namespace}/${k.name}`;
  const groups = new Map<string, string>();
  const states = new Map<string, RuleGroupEvaluationRecord>();
  const alertChanges: RuleGroupAlertChanges[] = [];
  return {
    groups,
    states,
    alertChanges,
    listAllGroups: () =>
      Promise.resolve(
        [...groups].map(([key, text]): ScheduledRuleGroup => {
          const [orgId = '', namespace = '', name = ''] = key.split('/');
          return { orgId, namespace, name, definition: text };
        }),
      ),
    loadGroup: (key) => {
      const text = groups.get(id(key));
      const found: RuleGroupForEvaluation | undefined =
        text === undefined
          ? undefined
          : {
              definition: text,
              revision: text,
              evaluation: structuredClone(states.get(id(key))),
            };
      return Promise.resolve(found);
    },
    listGroupAlerts: () => Promise.resolve([]),
    saveEvaluation: (key, expected, record, alerts) => {
      if (
        groups.get(id(key)) !== expected.revision ||
        states.get(id(key))?.lastEvaluationMs !== expected.lastEvaluationMs
      ) {
        return Promise.resolve(false);
      }
      states.set(id(key), structuredClone(record));
      if (alerts !== undefined) alertChanges.push(structuredClone(alerts));
      return Promise.resolve(true);
    },
  };
}

type Replica = {
  scheduler: RuleGroupScheduler;
  owned: { value: boolean };
  /** (time, rule names, the count carried in the state) per evaluation. */
  evaluations: { timeMs: number; records: string[]; count: number }[];
  written: number[];
};

type Evaluate = (
  orgId: string,
  group: RuleGroup,
  state: RuleGroupState,
  timeMs: number,
) => Promise<RuleGroupEvaluation>;

function replica(
  store: SchedulerStore,
  clock: { nowMs: number },
  options: {
    beforeSave?: () => Promise<void>;
    evaluate?: Evaluate;
    awaitWrites?: () => Promise<void>;
  } = {},
): Replica {
  const owned = { value: true };
  const evaluations: Replica['evaluations'] = [];
  const written: number[] = [];
  const countingEvaluate = (
    _orgId: string,
    group: RuleGroup,
    state: RuleGroupState,
    timeMs: number,
  ): Promise<RuleGroupEvaluation> => {
    const count = (state.rules['count']?.alerts.length ?? 0) + 1;
    evaluations.push({
      timeMs,
      records: group.rules.map((r) => (r.kind === 'record' ? r.record : r.alert)),
      count,
    });
    const alerts = Array.from({ length: count }, () => ({
      labels: {},
      annotations: {},
      state: 'firing' as const,
      activeAtMs: 0,
      firedAtMs: 0,
      resolvedAtMs: null,
      keepFiringSinceMs: null,
      value: 1,
    }));
    return Promise.resolve({
      state: { rules: { count: { alerts, writtenSeries: [] } } },
      samples: [],
      staleSeries: [],
      health: group.rules.map(() => ({ health: 'ok' as const, lastError: null })),
    });
  };
  const scheduler = createRuleGroupScheduler(
    {
      store,
      evaluate: options.evaluate ?? countingEvaluate,
      writeSamples: async (_group: RuleGroupRef, _evaluation, timeMs) => {
        written.push(timeMs);
        await options.beforeSave?.();
      },
      owns: () => owned.value,
      awaitWrites: options.awaitWrites ?? (() => Promise.resolve()),
      clock: { nowMs: () => clock.nowMs },
      logger,
    },
    {
      defaultIntervalMs,
      refreshIntervalMs: 1_000,
      maxConcurrentEvaluations: 4,
      resendDelayMs: 60_000,
    },
  );
  return { scheduler, owned, evaluations, written };
}

const firstSlot = ruleGroupSlotMs(ref, defaultIntervalMs, 1_764_000_000_000);

describe('createRuleGroupScheduler', () => {
  it('evaluates a group once per slot of its interval, at the slot time', async () => {
    const store = fakeStore();
    store.groups.set('org_1/ns/node', definition(null, ['a']));
    const clock = { nowMs: firstSlot + 5_000 };
    const one = replica(store, clock);
    await one.scheduler.tick();
    clock.nowMs += 20_000;
    await one.scheduler.tick();
    clock.nowMs += 40_000; // the next slot
    await one.scheduler.tick();
    await one.scheduler.tick();
    expect(one.evaluations.map((e) => e.timeMs)).toEqual([firstSlot, firstSlot + 60_000]);
    expect(one.written).toEqual([firstSlot, firstSlot + 60_000]);
    expect(store.states.get('org_1/ns/node')).toMatchObject({
      lastEvaluationMs: firstSlot + 60_000,
      health: [{ health: 'ok', lastError: null }],
    });
    // Several missed slots: only the latest is evaluated, as Prometheus skips missed ones.
    clock.nowMs += 5 * 60_000;
    await one.scheduler.tick();
    expect(one.evaluations.map((e) => e.timeMs)).toEqual([
      firstSlot,
      firstSlot + 60_000,
      firstSlot + 6 * 60_000,
    ]);
  });

  it('evaluates only once the samples accepted before the slot are stored, one wait per tick', async () => {
    const store = fakeStore();
    store.groups.set('org_1/ns/a', definition(null, ['a']));
    store.groups.set('org_1/ns/b', definition(null, ['b']));
    const clock = { nowMs: firstSlot + 60_000 };
    let waits = 0;
    let stored: () => void = () => undefined;
    const one = replica(store, clock, {
      awaitWrites: () => {
        waits += 1;
        return new Promise((resolve) => (stored = resolve));
      },
    });
    const tick = one.scheduler.tick();
    // The tick is held by the wait: a second tick meanwhile starts nothing twice.
    await new Promise((resolve) => setImmediate(resolve));
    expect(one.evaluations).toEqual([]);
    await one.scheduler.tick();
    expect(one.evaluations).toEqual([]);
    expect(waits).toBe(1);
    stored();
    await tick;
    expect(one.evaluations.flatMap((e) => e.records).sort()).toEqual(['a', 'b']);
  });

  it('serves the group whose slot was missed longest first when evaluations fall behind', async () => {
    const store = fakeStore();
    const names = Array.from({ length: 6 }, (_, i) => `g${i}`);
    for (const name of names) store.groups.set(`org_1/ns/${name}`, definition(null, [name]));
    const clock = { nowMs: firstSlot };
    // Each tick settles at most 4 evaluations (maxConcurrentEvaluations), a slot apart: 6 groups
    // cannot all be evaluated at every slot, but none may wait more than two.
    const one = replica(store, clock);
    const perTick: string[][] = [];
    for (let tick = 0; tick < 6; tick++) {
      const before = one.evaluations.length;
      await one.scheduler.tick();
      perTick.push(one.evaluations.slice(before).flatMap((e) => e.records));
      clock.nowMs += defaultIntervalMs;
    }
    expect(perTick.map((evaluated) => evaluated.length)).toEqual([4, 4, 4, 4, 4, 4]);
    for (let tick = 1; tick < perTick.length; tick++)
      expect(new Set([...perTick[tick - 1]!, ...perTick[tick]!])).toEqual(new Set(names));
  });

  it("takes a group's own interval and rule changes at its next evaluation", async () => {
    const store = fakeStore();
    store.groups.set('org_1/ns/node', definition('15s', ['a']));
    const slot = ruleGroupSlotMs(ref, 15_000, firstSlot);
    const clock = { nowMs: slot };
    const one = replica(store, clock);
    await one.scheduler.tick();
    store.groups.set('org_1/ns/node', definition('15s', ['a', 'b']));
    clock.nowMs += 15_000;
    await one.scheduler.tick();
    expect(one.evaluations).toEqual([
      { timeMs: slot, records: ['a'], count: 1 },
      { timeMs: slot + 15_000, records: ['a', 'b'], count: 2 },
    ]);
    // Deleted: evaluated no more.
    store.groups.clear();
    clock.nowMs += 15_000;
    await one.scheduler.tick();
    clock.nowMs += 15_000;
    await one.scheduler.tick();
    expect(one.evaluations).toHaveLength(2);
  });

  it('hands a group over with its state: no slot evaluated twice, none skipped', async () => {
    const store = fakeStore();
    store.groups.set('org_1/ns/node', definition(null, ['a']));
    const clock = { nowMs: firstSlot };
    const first = replica(store, clock);
    const second = replica(store, clock);
    second.owned.value = false;
    await first.scheduler.tick();
    await second.scheduler.tick();
    // A rebalance moves the group; both replicas tick through the next slots.
    first.owned.value = false;
    second.owned.value = true;
    for (let i = 1; i <= 2; i++) {
      clock.nowMs += 60_000;
      await Promise.all([first.scheduler.tick(), second.scheduler.tick()]);
    }
    // And back.
    first.owned.value = true;
    second.owned.value = false;
    clock.nowMs += 60_000;
    await Promise.all([first.scheduler.tick(), second.scheduler.tick()]);
    const all = [...first.evaluations, ...second.evaluations].sort((a, b) => a.timeMs - b.timeMs);
    expect(all.map((e) => [e.timeMs - firstSlot, e.count])).toEqual([
      [0, 1],
      [60_000, 2],
      [120_000, 3],
      [180_000, 4],
    ]);
    expect(first.evaluations.map((e) => e.timeMs - firstSlot)).toEqual([0, 180_000]);
  });

  it("refuses the save of an owner that lost the group while evaluating; the new owner's state stands", async () => {
    const store = fakeStore();
    store.groups.set('org_1/ns/node', definition(null, ['a']));
    const clock = { nowMs: firstSlot };
    const second = replica(store, clock);
    second.owned.value = false;
    const first = replica(store, clock, {
      // While the first evaluates, the group moves and the second evaluates the same slot.
      beforeSave: async () => {
        if (second.owned.value) return;
        second.owned.value = true;
        await second.scheduler.tick();
      },
    });
    await first.scheduler.tick();
    expect(first.evaluations).toHaveLength(1);
    expect(second.evaluations).toHaveLength(1);
    expect(store.states.get('org_1/ns/node')?.lastEvaluationMs).toBe(firstSlot);
    // The first still thinks it owns the group: at the next slot it reads the state back and
    // goes on from the second's evaluation; at the same slot it does nothing.
    await first.scheduler.tick();
    expect(first.evaluations).toHaveLength(1);
    second.owned.value = false;
    clock.nowMs += 60_000;
    await first.scheduler.tick();
    expect(first.evaluations.map((e) => e.count)).toEqual([1, 2]);
  });

  it('saves what an evaluation changes in alerts with its state, nothing when the group changed meanwhile', async () => {
    const store = fakeStore();
    const hot = 'name: node\nrules:\n- alert: Hot\n  expr: up == 0\n';
    store.groups.set('org_1/ns/node', hot);
    const clock = { nowMs: firstSlot };
    const firing: Evaluate = (_orgId, group, _state, timeMs) => {
      const alert = {
        labels: { alertname: 'Hot', instance: 'node-1:9100', severity: 'critical' },
        annotations: { summary: 'down' },
        state: 'firing' as const,
        activeAtMs: timeMs,
        firedAtMs: timeMs,
        resolvedAtMs: null,
        keepFiringSinceMs: null,
        value: 0,
      };
      return Promise.resolve({
        state: { rules: { 'Hot{}': { alerts: [alert], writtenSeries: [] } } },
        samples: [],
        staleSeries: [],
        health: group.rules.map(() => ({ health: 'ok' as const, lastError: null })),
      });
    };
    const change: { to?: string } = {};
    const one = replica(store, clock, {
      evaluate: firing,
      beforeSave: () => {
        if (change.to !== undefined) store.groups.set('org_1/ns/node', change.to);
        return Promise.resolve();
      },
    });
    await one.scheduler.tick();
    expect(store.alertChanges).toEqual([
      {
        fire: [
          expect.objectContaining({
            ruleKey: 'Hot{}',
            ruleName: 'Hot',
            host: 'node-1',
            severity: 'critical',
            firedAtMs: firstSlot,
            validUntilMs: firstSlot + 4 * 60_000,
          }),
        ],
        resolve: [],
        annotate: [],
        resend: [],
      },
    ]);
    const saved = store.states.get('org_1/ns/node')?.state as RuleGroupState;
    expect(saved.rules['Hot{}']?.alerts[0]?.lastSentAtMs).toBe(firstSlot);

    // The group changes while its next evaluation runs: that evaluation saves nothing.
    change.to = `${hot}  for: 1m\n`;
    clock.nowMs += 60_000;
    await one.scheduler.tick();
    expect(store.alertChanges).toHaveLength(1);
    expect(store.states.get('org_1/ns/node')?.lastEvaluationMs).toBe(firstSlot);
  });
});
