import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { buildSampleMessage } from '@monitor/testkit/builders';
import type { BatchContext, ConsumedRecord, RecordBatch } from '@monitor/bus';
import type {
  AlertEvent,
  EvaluatorCommit,
  EvaluatorCommitResult,
  EvaluatorStateKey,
  EvaluatorStore,
  LiveRule,
  StoredHosts,
} from '@monitor/db';
import { createLogger, dependencyUnavailable } from '@monitor/platform';
import type { SampleMessage } from '@monitor/schemas';
import { encodeSampleMessage, encodeSampleRecord } from '@monitor/schemas';
import type { EvaluatorMetrics } from './evaluator-metrics.js';
import type { RuleSource } from './rule-set.js';
import { createAlertEvaluator } from './alert-evaluator.js';
import { PartitionMovedError } from './commit-batch.js';
import type { RuleSet } from './rule-set.js';
import { createRuleSet } from './rule-set.js';
import type { WindowEvent, WindowState } from './rule-window.js';
import { evaluateSample } from './rule-window.js';
import { buildLiveRule } from './testing/live-rule.js';

const logger = createLogger({ level: 'silent', name: 'test' });
const minuteMs = 60_000;
const t0 = Date.UTC(2026, 10, 22, 12, 0, 0);
const at = (minutes: number): number => t0 + minutes * minuteMs;
const topic = 'metrics.samples.v1';

type Sample = {
  host: string;
  minutes: number;
  cpu?: number;
  org?: string;
  tags?: Record<string, string>;
  /** The tags label the sample's series (an agent protocol's sample). */
  labelled?: true;
};

function record(offset: number, sample: Sample | null, partition = 0): ConsumedRecord {
  const message: SampleMessage | undefined =
    sample === null
      ? undefined
      : buildSampleMessage({
          org_id: sample.org ?? 'org_1',
          host: sample.host,
          time_ms: at(sample.minutes),
          metrics: sample.cpu === undefined ? { memory_percent: 1 } : { cpu_percent: sample.cpu },
          tags: sample.tags ?? {},
          ...(sample.labelled === undefined ? {} : { tags_label_series: sample.labelled }),
        });
  return {
    topic,
    partition,
    offset: String(offset),
    key: sample === null ? null : `${message?.org_id}:${sample.host}`,
    value: message === undefined ? Buffer.from('not json') : encodeSampleMessage(message),
    headers: {},
    timestampMs: 0,
  };
}

/** One record carrying every sample (the format a gateway packs a partition's hosts in). */
function packed(offset: number, samples: Sample[]): ConsumedRecord {
  return {
    ...record(offset, samples[0] ?? null),
    value: encodeSampleRecord(
      samples.map((sample) => record(offset, sample).value ?? Buffer.alloc(0)),
    ),
  };
}

/** Records at consecutive offsets from `first`. */
function batch(first: number, ...samples: (Sample | null)[]): RecordBatch {
  return {
    topic,
    partition: 0,
    records: samples.map((s, i) => record(first + i, s)),
    logEndOffset: first + samples.length,
  };
}

/** An error the evaluator's deps call transient (a lost connection). */

const ctx: BatchContext = { heartbeat: () => Promise.resolve(), isStale: () => false };

type StoredAlert = EvaluatorStateKey & {
  status: 'active' | 'resolved';
  value: number;
  startedMs: number;
  firedMs: number;
  resolvedMs: number | null;
  /** Marked flapping (its fire or resolve came while the (rule, host) was flapping). */
  flapping: boolean;
  /** `settled` messages queued for it. */
  settled: number;
};

const keyOf = (key: EvaluatorStateKey): string => `${key.orgId}/${key.host}/${key.ruleId}`;

/**
 * An in-memory EvaluatorStore with the database adapter's semantics: states kept as JSON text,
 * one active alert per (rule, host), events, states and deletions of a rule that is not live at
 * the generation evaluated are dropped (and come back as a reset), and a commit whose
 * `fromOffset` is no longer the stored offset writes nothing.
 */
function fakeStore(liveGenerations: () => ReadonlyMap<string, number>) {
  const offsets = new Map<number, number>();
  const states = new Map<string, string>();
  const watermarks = new Map<string, string>();
  const alerts: StoredAlert[] = [];
  const calls = {
    loadHosts: [] as string[][],
    commits: [] as EvaluatorCommit[],
    positionReads: [] as number[],
  };
  let failNextCommit: Error | undefined;
  /** Commits touching this host fail for good, like PostgreSQL refusing a value. */
  let poisonHost: string | undefined;

  function apply(
    event: AlertEvent,
    reset: Map<string, EvaluatorStateKey>,
    result: { fired: number; alreadyActive: number; resolved: number; settled: number },
    current: (ruleId: string) => boolean,
  ) {
    const { orgId, host, ruleId } = event;
    if (!current(ruleId)) {
      reset.set(keyOf(event), { orgId, host, ruleId });
      return;
    }
    const active = alerts.find((a) => keyOf(a) === keyOf(event) && a.status === 'active');
    if (event.type === 'resolve') {
      if (active !== undefined) {
        active.status = 'resolved';
        active.resolvedMs = event.resolvedMs;
        active.flapping ||= event.flapping === true;
        result.resolved++;
      }
      return;
    }
    if (event.type === 'settle') {
      // The active alert when it settled firing, else the latest one (settleAlert).
      const target = event.firing
        ? active
        : alerts.filter((a) => keyOf(a) === keyOf(event)).sort((a, b) => b.firedMs - a.firedMs)[0];
      if (target !== undefined) {
        target.flapping = false;
        target.settled++;
        result.settled++;
      }
      return;
    }
    if (active !== undefined) result.alreadyActive++;
    else {
      const { value, startedMs, firedMs } = event;
      alerts.push({
        orgId,
        host,
        ruleId,
        status: 'active',
        value,
        startedMs,
        firedMs,
        resolvedMs: null,
        flapping: event.flapping === true,
        settled: 0,
      });
      result.fired++;
    }
  }

  const store: EvaluatorStore = {
    appliedOffset: (partition) => Promise.resolve(offsets.get(partition) ?? 0),
    // No-data sweeps (the only writers of a revision) are tested against PostgreSQL.
    appliedPosition: (partition) => {
      calls.positionReads.push(partition);
      return Promise.resolve({ nextOffset: offsets.get(partition) ?? 0, revision: 0 });
    },
    sweepNoData: () => Promise.resolve({ fired: 0, resolved: 0 }),
    loadHosts(hosts) {
      calls.loadHosts.push(hosts.map((h) => h.host));
      const wanted = new Set(hosts.map((h) => `${h.orgId}/${h.host}`));
      const found: StoredHosts = { states: [], watermarks: [] };
      for (const [key, json] of states) {
        const [orgId = '', host = '', ruleId = ''] = key.split('/');
        if (wanted.has(`${orgId}/${host}`))
          found.states.push({ orgId, host, ruleId, state: JSON.parse(json) });
      }
      for (const [key, json] of watermarks) {
        const [orgId = '', host = ''] = key.split('/');
        if (wanted.has(key)) found.watermarks.push({ orgId, host, marks: JSON.parse(json) });
      }
      return Promise.resolve(found);
    },
    commit(commit): Promise<EvaluatorCommitResult> {
      calls.commits.push(commit);
      if (failNextCommit !== undefined) {
        const err = failNextCommit;
        failNextCommit = undefined;
        return Promise.reject(err);
      }
      if (commit.watermarks.some(({ host }) => host === poisonHost)) {
        return Promise.reject(new Error('invalid byte sequence for encoding "UTF8": 0x00'));
      }
      const storedOffset = offsets.get(commit.partition) ?? 0;
      if (storedOffset !== commit.fromOffset) {
        return Promise.resolve({ outcome: 'offset-moved', storedOffset });
      }
      const result = { fired: 0, alreadyActive: 0, resolved: 0, settled: 0 };
      const reset = new Map<string, EvaluatorStateKey>();
      const live = liveGenerations();
      const current = (ruleId: string) =>
        live.get(ruleId) !== undefined && live.get(ruleId) === commit.ruleGenerations[ruleId];
      for (const event of commit.events) {
        if (!reset.has(keyOf(event))) apply(event, reset, result, current);
      }
      for (const { state, ...key } of commit.states) {
        if (current(key.ruleId) && !reset.has(keyOf(key))) {
          states.set(keyOf(key), JSON.stringify(state));
        } else reset.set(keyOf(key), key);
      }
      for (const key of commit.cleared) if (current(key.ruleId)) states.delete(keyOf(key));
      for (const { orgId, host, marks } of commit.watermarks) {
        watermarks.set(`${orgId}/${host}`, JSON.stringify(marks));
      }
      offsets.set(commit.partition, commit.nextOffset);
      return Promise.resolve({ outcome: 'committed', ...result, reset: [...reset.values()] });
    },
    dropOrphanStates() {
      let dropped = 0;
      for (const key of states.keys()) {
        if (!liveGenerations().has(key.split('/')[2] ?? '')) {
          states.delete(key);
          dropped++;
        }
      }
      return Promise.resolve(dropped);
    },
  };
  return {
    store,
    offsets,
    states,
    watermarks,
    alerts,
    calls,
    failNextCommit: (err: Error) => (failNextCommit = err),
    poisonHost: (host: string) => (poisonHost = host),
  };
}

/** Rules as the database would hand them out: the epoch is the largest generation given out. */
function ruleSnapshot(rules: LiveRule[], epoch: number) {
  return createRuleSet({ rules, epoch });
}

function harness(initialRules: LiveRule[], options = { maxCachedHostsPerPartition: 1000 }) {
  let epoch = Math.max(0, ...initialRules.map((r) => r.generation));
  let rules: RuleSet = ruleSnapshot(initialRules, epoch);
  // What the database holds live; the evaluator sees it through `rules` once it polled.
  const generationsOf = (set: RuleSet) =>
    new Map([...set.ruleIds].map((id) => [id, set.generationOf(id)!]));
  let live: ReadonlyMap<string, number> = generationsOf(rules);
  const fake = fakeStore(() => live);
  const counters = {
    evaluated: 0,
    fired: 0,
    resolved: 0,
    replayed: 0,
    undecodable: 0,
    unprocessable: 0,
    logRestarts: 0,
  };
  const metrics: EvaluatorMetrics = {
    evaluated: (n) => (counters.evaluated += n),
    alertsFired: (n) => (counters.fired += n),
    alertsResolved: (n) => (counters.resolved += n),
    recordsSkipped: (reason, n) => (counters[reason] += n),
    logRestarted: () => (counters.logRestarts += 1),
  };
  const deadLetters: { offset: string; reason: string }[] = [];
  let clockMs = 0;
  const newEvaluator = (
    source: RuleSource = {
      current: () => rules,
      poll: () => Promise.resolve(),
      refresh: () => Promise.resolve(),
    },
  ) =>
    createAlertEvaluator(
      {
        rules: source,
        store: fake.store,
        deadLetters: {
          send: (record, reason) => {
            deadLetters.push({ offset: record.offset, reason });
            return Promise.resolve();
          },
        },
        metrics,
        logger,
        clock: { nowMs: () => clockMs },
        sleep: () => Promise.resolve(),
      },
      options,
    );
  return {
    ...fake,
    counters,
    deadLetters,
    evaluator: newEvaluator(),
    newEvaluator,
    /** The rule set the evaluators see from now on; rules of a larger generation than any before raise the epoch. */
    setRules: (next: LiveRule[]) => {
      epoch = Math.max(epoch, ...next.map((r) => r.generation));
      rules = ruleSnapshot(next, epoch);
      live = generationsOf(rules);
    },
    currentRules: () => rules,
    /** The evaluators' wall clock from now on. */
    setClock: (ms: number) => (clockMs = ms),
    setLiveInDatabase: (ruleIds: string[]) =>
      (live = new Map(ruleIds.map((id) => [id, rules.generationOf(id) ?? 0]))),
    /** A rule change the evaluators have not polled yet: `rule` live at its generation. */
    restartInDatabase: (rule: LiveRule, nowMs: number) => {
      live = new Map([...live, [rule.id, rule.generation]]);
      for (const alert of fake.alerts) {
        if (alert.ruleId === rule.id && alert.status === 'active') {
          alert.status = 'resolved';
          alert.resolvedMs = nowMs;
        }
      }
      for (const key of [...fake.states.keys()]) {
        if (key.endsWith(`/${rule.id}`)) fake.states.delete(key);
      }
    },
  };
}

describe('createAlertEvaluator', () => {
  it('evaluates a batch and commits states, alerts and the next offset in one call', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 2 })]);
    await h.evaluator.handleBatch(
      batch(
        0,
        { host: 'web-1', minutes: 0, cpu: 95 },
        { host: 'web-2', minutes: 0, cpu: 10 },
        { host: 'web-1', minutes: 1, cpu: 96 },
        { host: 'web-1', minutes: 2, cpu: 97 },
        { host: 'web-1', minutes: 3, cpu: 10 },
      ),
      ctx,
    );
    expect(h.calls.loadHosts).toEqual([['web-1', 'web-2']]);
    expect(h.calls.commits).toHaveLength(1);
    expect(h.calls.commits[0]).toMatchObject({
      partition: 0,
      fromOffset: 0,
      nextOffset: 5,
      states: [],
      cleared: [{ orgId: 'org_1', host: 'web-1', ruleId: 'rul_cpu' }],
    });
    expect(h.calls.commits[0]!.events).toEqual([
      {
        orgId: 'org_1',
        host: 'web-1',
        ruleId: 'rul_cpu',
        type: 'fire',
        startedMs: at(0),
        firedMs: at(2),
        value: 97,
      },
      { orgId: 'org_1', host: 'web-1', ruleId: 'rul_cpu', type: 'resolve', resolvedMs: at(3) },
    ]);
    expect(h.states.size).toBe(0);
    expect(h.counters).toMatchObject({ evaluated: 5, fired: 1, resolved: 1 });
  });

  it('skips NaN and infinite values: no threshold compares against them', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    await h.evaluator.handleBatch(
      batch(
        0,
        { host: 'web-1', minutes: 0, cpu: Number.POSITIVE_INFINITY, labelled: true },
        { host: 'web-1', minutes: 1, cpu: Number.NaN, labelled: true },
        { host: 'web-1', minutes: 2, cpu: 95, labelled: true },
      ),
      ctx,
    );
    expect(h.calls.commits[0]!.events).toEqual([
      {
        orgId: 'org_1',
        host: 'web-1',
        ruleId: 'rul_cpu',
        type: 'fire',
        startedMs: at(2),
        firedMs: at(2),
        value: 95,
      },
    ]);
  });

  it('skips records below the stored offset, and a batch entirely below it costs one read', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    const first = batch(
      0,
      { host: 'web-1', minutes: 0, cpu: 95 },
      { host: 'web-1', minutes: 1, cpu: 10 },
    );
    await h.evaluator.handleBatch(first, ctx);
    await h.newEvaluator().handleBatch(first, ctx);
    expect(h.calls.commits).toHaveLength(1);
    expect(h.calls.loadHosts).toHaveLength(1);
    expect(h.counters.replayed).toBe(2);

    // Overlapping redelivery: only the record at offset 2 is new.
    await h.evaluator.handleBatch(
      batch(1, { host: 'web-1', minutes: 1, cpu: 10 }, { host: 'web-1', minutes: 2, cpu: 99 }),
      ctx,
    );
    expect(h.calls.commits[1]).toMatchObject({ fromOffset: 2, nextOffset: 3 });
    expect(h.alerts.map((a) => [a.status, a.firedMs])).toEqual([
      ['resolved', at(0)],
      ['active', at(2)],
    ]);
  });

  it('keeps hosts in memory and loads only the ones it does not know, those without windows included', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 5 })]);
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    await h.evaluator.handleBatch(
      batch(1, { host: 'web-1', minutes: 5, cpu: 95 }, { host: 'web-2', minutes: 5, cpu: 95 }),
      ctx,
    );
    await h.evaluator.handleBatch(batch(3, { host: 'web-2', minutes: 6, cpu: 95 }), ctx);
    expect(h.calls.loadHosts).toEqual([['web-1'], ['web-2']]);
    expect(h.alerts.map((a) => [a.host, a.startedMs, a.firedMs])).toEqual([
      ['web-1', at(0), at(5)],
    ]);
  });

  it('resumes a checkpointed window in a new evaluator and fires at the right sample', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 3 })]);
    await h.evaluator.handleBatch(
      batch(0, { host: 'web-1', minutes: 0, cpu: 95 }, { host: 'web-1', minutes: 2, cpu: 95 }),
      ctx,
    );
    const restarted = h.newEvaluator();
    await restarted.handleBatch(batch(2, { host: 'web-1', minutes: 2.5, cpu: 95 }), ctx);
    expect(h.alerts).toEqual([]);
    await restarted.handleBatch(batch(3, { host: 'web-1', minutes: 3, cpu: 91 }), ctx);
    expect(h.alerts).toMatchObject([
      { status: 'active', startedMs: at(0), firedMs: at(3), value: 91 },
    ]);
  });

  it('drops its cache of a partition another consumer advanced meanwhile', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 5 })]);
    const other = h.newEvaluator();
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    // The partition moves to `other`, which sees the window cleared, then moves back.
    await other.handleBatch(batch(1, { host: 'web-1', minutes: 1, cpu: 10 }), ctx);
    await h.evaluator.handleBatch(batch(2, { host: 'web-1', minutes: 5, cpu: 95 }), ctx);
    expect(h.alerts).toEqual([]);
    expect(h.calls.loadHosts).toHaveLength(3);
    expect(JSON.parse(h.states.get('org_1/web-1/rul_cpu')!)).toMatchObject({
      status: 'pending',
      startedMs: at(5),
    });
  });

  it('reads the applied position only for a partition whose last batch it did not commit', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 2 })]);
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    await h.evaluator.handleBatch(batch(1, { host: 'web-1', minutes: 1, cpu: 95 }), ctx);
    await h.evaluator.handleBatch(batch(2, { host: 'web-1', minutes: 2, cpu: 95 }), ctx);
    expect(h.calls.positionReads).toEqual([0]);
    expect(h.calls.commits.map((c) => c.fromOffset)).toEqual([0, 1, 2]);
    expect(h.alerts).toMatchObject([{ status: 'active', startedMs: at(0), firedMs: at(2) }]);
  });

  it('evaluates again from the stored position when another consumer moved it past its own', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 2 })]);
    const other = h.newEvaluator();
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    // `other` took the partition for a batch, which it evaluated and committed.
    await other.handleBatch(batch(1, { host: 'web-1', minutes: 1, cpu: 95 }), ctx);
    // Redelivered to the first with the next one: its own last commit is stale, its commit from
    // there writes nothing, and the batch is evaluated again from the stored position.
    await h.evaluator.handleBatch(
      batch(1, { host: 'web-1', minutes: 1, cpu: 95 }, null, {
        host: 'web-1',
        minutes: 2,
        cpu: 95,
      }),
      ctx,
    );
    expect(h.calls.commits.map((c) => c.fromOffset)).toEqual([0, 1, 1, 2]);
    // Counted by the attempt that committed, not by the one evaluated from the stale position.
    expect(h.counters.replayed).toBe(1);
    expect(h.counters.undecodable).toBe(1);
    expect(h.alerts).toMatchObject([{ status: 'active', startedMs: at(0), firedMs: at(2) }]);
  });

  it('throws when the stored offset moved during the batch, and skips it when redelivered', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    const loser = h.newEvaluator();
    const contested = batch(0, { host: 'web-1', minutes: 0, cpu: 95 });
    const positionRead = h.store.appliedPosition.bind(h.store);
    let raced = false;
    h.store.appliedPosition = async (partition) => {
      const position = await positionRead(partition);
      if (!raced) {
        raced = true;
        // The winner commits the same records between the loser's read and its commit.
        await h.evaluator.handleBatch(contested, ctx);
      }
      return position;
    };
    await expect(loser.handleBatch(contested, ctx)).rejects.toBeInstanceOf(PartitionMovedError);
    await loser.handleBatch(contested, ctx);
    expect(h.alerts).toHaveLength(1);
    expect(h.calls.commits.map((c) => c.fromOffset)).toEqual([0, 0]);
  });

  it('throws before committing when the partition was taken away', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    const stale: BatchContext = { heartbeat: () => Promise.resolve(), isStale: () => true };
    await expect(
      h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), stale),
    ).rejects.toBeInstanceOf(PartitionMovedError);
    expect(h.calls.commits).toEqual([]);
  });

  it('keeps nothing of a batch whose commit failed, so the redelivery fires exactly once', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 1 })]);
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    const firing = batch(1, { host: 'web-1', minutes: 1, cpu: 95 });
    h.failNextCommit(dependencyUnavailable('The database', 1, new Error('connection lost')));
    await expect(h.evaluator.handleBatch(firing, ctx)).rejects.toMatchObject({
      code: 'dependency_unavailable',
    });
    await h.evaluator.handleBatch(firing, ctx);
    expect(h.alerts).toMatchObject([{ startedMs: at(0), firedMs: at(1) }]);
  });

  it('dead-letters a record whose evaluation fails for good and evaluates the rest of its batch', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    h.poisonHost('bad\u0000host');
    await h.evaluator.handleBatch(
      batch(
        0,
        { host: 'web-1', minutes: 0, cpu: 95 },
        { host: 'web-2', minutes: 0, cpu: 95 },
        { host: 'bad\u0000host', minutes: 0, cpu: 95 },
        { host: 'web-3', minutes: 0, cpu: 95 },
        { host: 'web-4', minutes: 0, cpu: 95 },
      ),
      ctx,
    );
    expect(h.alerts.map((a) => a.host).sort()).toEqual(['web-1', 'web-2', 'web-3', 'web-4']);
    expect(h.deadLetters).toEqual([{ offset: '2', reason: expect.stringContaining('0x00') }]);
    expect(h.counters.unprocessable).toBe(1);
    expect(h.offsets.get(0)).toBe(5);
    // The partition moves on: the next batch is evaluated as usual.
    await h.evaluator.handleBatch(batch(5, { host: 'web-5', minutes: 1, cpu: 95 }), ctx);
    expect(h.alerts).toHaveLength(5);
  });

  it('evaluates old single-host records and new many-host records of one batch alike', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    const old = record(0, { host: 'web-1', minutes: 0, cpu: 95 });
    const many = packed(1, [
      { host: 'web-2', minutes: 0, cpu: 95 },
      { host: 'web-3', minutes: 0, cpu: 50 },
      { host: 'web-2', minutes: 1, cpu: 10 },
    ]);
    await h.evaluator.handleBatch(
      { topic, partition: 0, records: [old, many], logEndOffset: 2 },
      ctx,
    );
    expect(h.alerts.map((a) => [a.host, a.status])).toEqual([
      ['web-1', 'active'],
      ['web-2', 'resolved'],
    ]);
    expect(h.offsets.get(0)).toBe(2);
    // A replay of either record changes nothing.
    await h.evaluator.handleBatch(
      { topic, partition: 0, records: [old, many], logEndOffset: 2 },
      ctx,
    );
    expect(h.alerts).toHaveLength(2);
    expect(h.counters.replayed).toBe(2);
  });

  it('sets aside only the host of a many-host record whose evaluation fails for good', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    h.poisonHost('bad\u0000host');
    await h.evaluator.handleBatch(
      {
        topic,
        partition: 0,
        records: [
          record(0, { host: 'web-1', minutes: 0, cpu: 95 }),
          packed(1, [
            { host: 'web-2', minutes: 0, cpu: 95 },
            { host: 'bad\u0000host', minutes: 0, cpu: 95 },
            { host: 'web-3', minutes: 0, cpu: 95 },
          ]),
          record(2, { host: 'web-4', minutes: 0, cpu: 95 }),
        ],
        logEndOffset: 3,
      },
      ctx,
    );
    expect(h.alerts.map((a) => a.host).sort()).toEqual(['web-1', 'web-2', 'web-3', 'web-4']);
    expect(h.deadLetters).toEqual([{ offset: '1', reason: expect.stringContaining('0x00') }]);
    expect(h.counters.unprocessable).toBe(1);
    expect(h.offsets.get(0)).toBe(3);
  });

  it('redelivers a batch that fails on a transient error instead of setting records aside', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    h.failNextCommit(dependencyUnavailable('The database', 1, new Error('connection lost')));
    await expect(
      h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx),
    ).rejects.toMatchObject({ code: 'dependency_unavailable' });
    expect(h.deadLetters).toEqual([]);
    expect(h.offsets.get(0)).toBeUndefined();
  });

  it('starts a partition afresh when its stored offset is past the end of the log', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    h.offsets.set(0, 1_000); // from a log of the topic that was deleted since
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    expect(h.alerts).toHaveLength(1);
    expect(h.counters.logRestarts).toBe(1);
    expect(h.offsets.get(0)).toBe(1);
    // A replay of the new log is a replay again.
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    expect(h.counters.replayed).toBe(1);
  });

  it('brings its rules up to date before it evaluates a batch', async () => {
    const h = harness([]);
    const created = buildLiveRule({ id: 'rul_cpu' });
    let known = h.currentRules();
    const asked: number[] = [];
    const evaluator = h.newEvaluator({
      current: () => known,
      poll: () => Promise.resolve(),
      // The rule was created (and answered) before the sample arrived: the check sees it.
      refresh: () => {
        asked.push(Date.now());
        h.setRules([created]);
        known = h.currentRules();
        return Promise.resolve();
      },
    });
    await evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    expect(asked).toHaveLength(1);
    expect(h.alerts).toMatchObject([{ ruleId: 'rul_cpu', host: 'web-1' }]);
  });

  it('skips and counts undecodable records and still advances the offset past them', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    await h.evaluator.handleBatch(
      batch(0, null, { host: 'web-1', minutes: 0, cpu: 95 }, null),
      ctx,
    );
    expect(h.counters.undecodable).toBe(2);
    expect(h.offsets.get(0)).toBe(3);
    expect(h.alerts).toHaveLength(1);
  });

  it('applies a rule only to its organization, its metric and the hosts its scope selects', async () => {
    const h = harness([
      buildLiveRule({ id: 'rul_all' }),
      buildLiveRule({ id: 'rul_prod', scope: { env: 'prod' } }),
      buildLiveRule({ id: 'rul_mem', metric: 'memory_percent', threshold: 0 }),
    ]);
    await h.evaluator.handleBatch(
      batch(
        0,
        { host: 'web-1', minutes: 0, cpu: 95, tags: { env: 'prod', team: 'a' } },
        { host: 'web-2', minutes: 0, cpu: 95, tags: { env: 'staging' } },
        { host: 'web-3', minutes: 0, cpu: 95, org: 'org_2', tags: { env: 'prod' } },
        { host: 'web-4', minutes: 0, tags: { env: 'prod' } },
      ),
      ctx,
    );
    expect(h.alerts.map((a) => [a.host, a.ruleId])).toEqual([
      ['web-1', 'rul_all'],
      ['web-1', 'rul_prod'],
      ['web-2', 'rul_all'],
      ['web-4', 'rul_mem'],
    ]);
    expect(h.counters.evaluated).toBe(4);
  });

  it('starts a window afresh when its fire finds the rule gone', async () => {
    const cpu = buildLiveRule({ id: 'rul_cpu', durationMinutes: 1 });
    const h = harness([cpu]);
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    // Disabled through the API (its windows deleted); this replica has not polled yet, so it
    // still evaluates the rule: the fire is refused and nothing of it is stored.
    h.setLiveInDatabase([]);
    h.states.clear();
    await h.evaluator.handleBatch(batch(1, { host: 'web-1', minutes: 1, cpu: 95 }), ctx);
    expect(h.alerts).toEqual([]);
    expect(h.states.size).toBe(0);
    // Enabled again, a new generation, polled: the window needs its full duration again.
    h.setRules([{ ...cpu, generation: 1 }]);
    await h.evaluator.handleBatch(batch(2, { host: 'web-1', minutes: 2, cpu: 95 }), ctx);
    expect(h.alerts).toEqual([]);
    await h.evaluator.handleBatch(batch(3, { host: 'web-1', minutes: 3, cpu: 95 }), ctx);
    expect(h.alerts).toMatchObject([{ startedMs: at(2), firedMs: at(3) }]);
  });

  it('leaves alone the windows a replica that knew of a rule change first wrote', async () => {
    // The review's case: threshold 90 → 50 (generation 2) while replica `stale` has not polled.
    const before = buildLiveRule({ id: 'rul_cpu', threshold: 90, generation: 1 });
    const after = { ...before, threshold: 50, generation: 2 };
    const h = harness([before]);
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 10, cpu: 10 }), ctx);
    const staleRules = h.currentRules();
    let polledYet = false;
    const stale = h.newEvaluator({
      current: () => (polledYet ? h.currentRules() : staleRules),
      poll: () => Promise.resolve(),
      // A replica that missed the change (its check answered before the change committed).
      refresh: () => Promise.resolve(),
    });
    h.restartInDatabase(after, at(10));
    h.setRules([after]);
    // An out-of-order sample: the new generation has evaluated nothing, so it fires.
    await h.evaluator.handleBatch(batch(1, { host: 'web-1', minutes: 5, cpu: 60 }), ctx);
    expect(h.alerts.filter((a) => a.status === 'active')).toMatchObject([{ firedMs: at(5) }]);
    // The partition moves to the stale replica: under threshold 90 its sample is good, but
    // nothing it decides for the old generation may resolve, store or delete anything.
    await stale.handleBatch(batch(2, { host: 'web-1', minutes: 11, cpu: 60 }), ctx);
    expect(h.states.has('org_1/web-1/rul_cpu')).toBe(true);
    // It polls (and no longer trusts what it cached); the next good sample resolves the alert.
    polledYet = true;
    await stale.handleBatch(batch(3, { host: 'web-1', minutes: 12, cpu: 10 }), ctx);
    expect(h.alerts.map((a) => [a.status, a.firedMs, a.resolvedMs])).toEqual([
      ['resolved', at(5), at(12)],
    ]);
  });

  it('forgets the windows of removed rules in memory and in storage', async () => {
    const cpu = buildLiveRule({ id: 'rul_cpu', durationMinutes: 0 });
    const h = harness([cpu]);
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    h.setRules([]);
    expect(await h.evaluator.rulesRemoved()).toBe(1);
    // Enabled again (its alert was resolved by the API meanwhile): it fires afresh.
    h.alerts[0]!.status = 'resolved';
    h.setRules([cpu]);
    await h.evaluator.handleBatch(batch(1, { host: 'web-1', minutes: 1, cpu: 95 }), ctx);
    expect(h.alerts.map((a) => [a.status, a.firedMs])).toEqual([
      ['resolved', at(0)],
      ['active', at(1)],
    ]);
  });

  it('does not cache a batch evaluated while the rules changed', async () => {
    const cpu = buildLiveRule({ id: 'rul_cpu', durationMinutes: 0 });
    const h = harness([cpu]);
    const commit = h.store.commit.bind(h.store);
    h.store.commit = async (c) => {
      const result = await commit(c);
      h.setRules([cpu]); // a reload lands while the batch commits
      return result;
    };
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    await h.evaluator.handleBatch(batch(1, { host: 'web-1', minutes: 1, cpu: 95 }), ctx);
    expect(h.calls.loadHosts).toHaveLength(2);
  });

  it('forgets the least recently seen hosts beyond its bound and reloads them when seen again', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 5 })], {
      maxCachedHostsPerPartition: 1,
    });
    await h.evaluator.handleBatch(
      batch(0, { host: 'a', minutes: 0, cpu: 95 }, { host: 'b', minutes: 0, cpu: 95 }),
      ctx,
    );
    await h.evaluator.handleBatch(batch(2, { host: 'a', minutes: 5, cpu: 95 }), ctx);
    await h.evaluator.handleBatch(batch(3, { host: 'a', minutes: 6, cpu: 95 }), ctx);
    await h.evaluator.handleBatch(batch(4, { host: 'b', minutes: 6, cpu: 95 }), ctx);
    expect(h.calls.loadHosts).toEqual([['a', 'b'], ['a'], ['b']]);
    expect(h.alerts.map((a) => [a.host, a.startedMs, a.firedMs])).toEqual([
      ['a', at(0), at(5)],
      ['b', at(0), at(6)],
    ]);
  });

  it('stores only windows that are not ok, and deletes the row of a window that is ok again', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 5 })]);
    await h.evaluator.handleBatch(
      batch(0, { host: 'web-1', minutes: 0, cpu: 95 }, { host: 'web-2', minutes: 0, cpu: 10 }),
      ctx,
    );
    expect([...h.states.keys()]).toEqual(['org_1/web-1/rul_cpu']);
    await h.evaluator.handleBatch(batch(2, { host: 'web-1', minutes: 1, cpu: 10 }), ctx);
    await h.evaluator.handleBatch(
      batch(3, { host: 'web-1', minutes: 2, cpu: 10 }, { host: 'web-2', minutes: 2, cpu: 10 }),
      ctx,
    );
    expect(h.calls.commits.map((c) => [c.states.map((s) => s.state), c.cleared])).toEqual([
      [[{ v: 2, status: 'pending', lastSampleMs: at(0), startedMs: at(0) }], []],
      [[], [{ orgId: 'org_1', host: 'web-1', ruleId: 'rul_cpu' }]],
      [[], []],
    ]);
    expect(h.states.size).toBe(0);
  });

  it('checkpoints a pending window’s own last sample time on every sample it takes', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 5 })]);
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    await h.evaluator.handleBatch(batch(1, { host: 'web-1', minutes: 2, cpu: 96 }), ctx);
    expect(JSON.parse(h.states.get('org_1/web-1/rul_cpu')!)).toEqual({
      v: 2,
      status: 'pending',
      lastSampleMs: at(2),
      startedMs: at(0),
    });
    // The restarted process knows the window's last sample, so an older one is still ignored.
    const restarted = h.newEvaluator();
    await restarted.handleBatch(batch(2, { host: 'web-1', minutes: 1, cpu: 10 }), ctx);
    await restarted.handleBatch(batch(3, { host: 'web-1', minutes: 5, cpu: 97 }), ctx);
    expect(h.alerts).toMatchObject([{ startedMs: at(0), firedMs: at(5) }]);
  });

  it('ignores a sample not newer than the newest one evaluated on the host’s metric, on ok windows too', async () => {
    const h = harness([
      buildLiveRule({ id: 'rul_a', durationMinutes: 0 }),
      buildLiveRule({ id: 'rul_b', durationMinutes: 0, threshold: 50 }),
    ]);
    await h.evaluator.handleBatch(
      batch(0, { host: 'web-1', minutes: 5, cpu: 10 }, { host: 'web-1', minutes: 3, cpu: 95 }),
      ctx,
    );
    await h.evaluator.handleBatch(batch(2, { host: 'web-1', minutes: 5, cpu: 95 }), ctx);
    expect(h.alerts).toEqual([]);
    expect(h.counters.evaluated).toBe(6);
    await h.evaluator.handleBatch(batch(3, { host: 'web-1', minutes: 6, cpu: 60 }), ctx);
    expect(h.alerts.map((a) => [a.ruleId, a.firedMs])).toEqual([['rul_b', at(6)]]);
    await h.evaluator.handleBatch(batch(4, { host: 'web-1', minutes: 5.5, cpu: 95 }), ctx);
    expect(h.alerts).toHaveLength(1);
  });

  it('takes the first of several series of a host at one time, whatever their labels, and a replay changes nothing', async () => {
    const h = harness([
      buildLiveRule({ id: 'rul_any', durationMinutes: 0 }),
      buildLiveRule({ id: 'rul_cpu1', durationMinutes: 0, scope: { cpu: '1' } }),
    ]);
    const series = (minutes: number, cpu: string, value: number): Sample => ({
      host: 'web-1',
      minutes,
      cpu: value,
      tags: { cpu },
      labelled: true,
    });
    const records: RecordBatch = {
      topic,
      partition: 0,
      records: [
        packed(0, [series(1, '0', 10), series(1, '1', 95)]),
        record(1, series(2, '1', 96)),
        record(2, series(2, '0', 97)),
      ],
      logEndOffset: 3,
    };
    await h.evaluator.handleBatch(records, ctx);
    await h.evaluator.handleBatch(records, ctx);
    await h.newEvaluator().handleBatch(records, ctx);
    // Per (rule, host), a time's first sample in log order is evaluated and the later ones at
    // that time are not newer: the unscoped rule takes cpu 0 at 1 and cpu 1 at 2. The scoped
    // rule sees only its series.
    expect(h.alerts.map((a) => [a.ruleId, a.status, a.startedMs, a.value])).toEqual([
      ['rul_cpu1', 'active', at(1), 95],
      ['rul_any', 'active', at(2), 96],
    ]);
    expect(h.counters.fired).toBe(2);
  });

  it('keeps the watermarks across a restart: an older sample still moves nothing', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 0 })]);
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 5, cpu: 10 }), ctx);
    expect(JSON.parse(h.watermarks.get('org_1/web-1')!)).toEqual({
      v: 1,
      groups: [['cpu_percent', '', at(5), 0]],
    });
    await h.newEvaluator().handleBatch(batch(1, { host: 'web-1', minutes: 3, cpu: 95 }), ctx);
    expect(h.alerts).toEqual([]);
    await h.newEvaluator().handleBatch(batch(2, { host: 'web-1', minutes: 6, cpu: 95 }), ctx);
    expect(h.alerts).toMatchObject([{ startedMs: at(6), firedMs: at(6) }]);
  });

  it('lets a rule added later take a sample older than the host’s watermark, then keeps its own', async () => {
    const old = buildLiveRule({ id: 'rul_old', durationMinutes: 0, generation: 1 });
    const h = harness([old]);
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 5, cpu: 10 }), ctx);
    h.setRules([
      old,
      buildLiveRule({ id: 'rul_new', durationMinutes: 0, threshold: 50, generation: 2 }),
    ]);
    // Older than what rul_old evaluated, but rul_new has evaluated nothing on web-1 yet.
    await h.evaluator.handleBatch(batch(1, { host: 'web-1', minutes: 3, cpu: 40 }), ctx);
    expect(JSON.parse(h.states.get('org_1/web-1/rul_new')!)).toEqual({
      v: 2,
      status: 'ok',
      lastSampleMs: at(3),
    });
    // After a restart: older than rul_new's own sample, ignored; between the two, rul_new only.
    const restarted = h.newEvaluator();
    await restarted.handleBatch(batch(2, { host: 'web-1', minutes: 2, cpu: 95 }), ctx);
    expect(h.alerts).toEqual([]);
    await restarted.handleBatch(batch(3, { host: 'web-1', minutes: 4, cpu: 95 }), ctx);
    expect(h.alerts.map((a) => [a.ruleId, a.firedMs])).toEqual([['rul_new', at(4)]]);
    // A sample newer than every rule's: both take it, and rul_new needs no row of its own.
    await restarted.handleBatch(batch(4, { host: 'web-1', minutes: 6, cpu: 30 }), ctx);
    expect(h.alerts.map((a) => [a.ruleId, a.status])).toEqual([['rul_new', 'resolved']]);
    expect(h.states.size).toBe(0);
  });

  it('keeps a scoped rule’s own last sample while the host’s tags left its scope', async () => {
    const h = harness([
      buildLiveRule({ id: 'rul_all', durationMinutes: 0 }),
      buildLiveRule({ id: 'rul_prod', durationMinutes: 0, scope: { env: 'prod' } }),
    ]);
    await h.evaluator.handleBatch(
      batch(
        0,
        { host: 'web-1', minutes: 1, cpu: 10, tags: { env: 'prod' } },
        { host: 'web-1', minutes: 5, cpu: 10, tags: { env: 'staging' } },
      ),
      ctx,
    );
    // Out of order: older than rul_all's newest sample, newer than rul_prod's.
    await h
      .newEvaluator()
      .handleBatch(batch(2, { host: 'web-1', minutes: 3, cpu: 95, tags: { env: 'prod' } }), ctx);
    expect(h.alerts.map((a) => [a.ruleId, a.firedMs])).toEqual([['rul_prod', at(3)]]);
  });

  it('catches up with the rules before using watermarks written under newer ones', async () => {
    const first = buildLiveRule({ id: 'rul_a', durationMinutes: 0, generation: 1 });
    const added = buildLiveRule({ id: 'rul_b', durationMinutes: 0, generation: 2 });
    const h = harness([first]);
    h.setRules([first, added]);
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 5, cpu: 10 }), ctx);
    // A replica that has not polled since rul_b was added, until asked to.
    let polled = false;
    const stale = ruleSnapshot([first], 1);
    const lagging = h.newEvaluator({
      current: () => (polled ? h.currentRules() : stale),
      poll: () => {
        polled = true;
        return Promise.resolve();
      },
      refresh: () => Promise.resolve(),
    });
    await lagging.handleBatch(batch(1, { host: 'web-1', minutes: 6, cpu: 10 }), ctx);
    expect(polled).toBe(true);
    // rul_b evaluated minute 6 too: had the lagging replica written its mark under the old
    // rules, rul_b would count as having evaluated nothing and take the older sample.
    await h.newEvaluator().handleBatch(batch(2, { host: 'web-1', minutes: 5.5, cpu: 95 }), ctx);
    expect(h.alerts).toEqual([]);
  });

  it('drops the rows of unreadable states and watermarks it loads', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 5 })]);
    h.states.set('org_1/web-1/rul_cpu', JSON.stringify({ v: 9 }));
    h.watermarks.set('org_1/web-1', JSON.stringify({ v: 1, groups: [['cpu_percent']] }));
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 10 }), ctx);
    expect(h.calls.commits[0]?.cleared).toEqual([
      { orgId: 'org_1', host: 'web-1', ruleId: 'rul_cpu' },
    ]);
    expect(h.states.size).toBe(0);
    expect(JSON.parse(h.watermarks.get('org_1/web-1')!)).toEqual({
      v: 1,
      groups: [['cpu_percent', '', at(0), 0]],
    });
  });

  it('stores a window that leaves an old ok row as an update, not also a delete', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 5 })]);
    h.states.set('org_1/web-1/rul_cpu', JSON.stringify({ v: 1, status: 'ok', lastSampleMs: 0 }));
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    expect(h.calls.commits[0]).toMatchObject({
      states: [{ ruleId: 'rul_cpu', state: { status: 'pending' } }],
      cleared: [],
    });
  });

  it('keeps a flapping window across batches and a restart, then stores where it settled', async () => {
    const h = harness([
      buildLiveRule({ id: 'rul_flap', flapping: { windowMinutes: 10, maxTransitions: 2 } }),
    ]);
    const samples: Sample[] = [
      { host: 'web-1', minutes: 0, cpu: 95 },
      { host: 'web-1', minutes: 1, cpu: 50 },
      { host: 'web-1', minutes: 2, cpu: 95 },
      { host: 'web-1', minutes: 3, cpu: 50 },
    ];
    for (const [offset, sample] of samples.entries()) {
      await h.evaluator.handleBatch(batch(offset, sample), ctx);
    }
    // The ok window keeps its flap data (stored), though the group's mark is at the same time.
    expect(JSON.parse(h.states.get('org_1/web-1/rul_flap')!)).toEqual({
      v: 2,
      status: 'ok',
      lastSampleMs: at(3),
      flap: { changesMs: [at(1), at(2), at(3)], flapping: true },
    });
    expect(h.alerts.map((a) => [a.firedMs, a.resolvedMs, a.flapping])).toEqual([
      [at(0), at(1), false],
      [at(2), at(3), true],
    ]);
    const restarted = h.newEvaluator();
    await restarted.handleBatch(batch(4, { host: 'web-1', minutes: 12.5, cpu: 50 }), ctx);
    expect(h.alerts.every((a) => a.settled === 0)).toBe(true);
    await restarted.handleBatch(batch(5, { host: 'web-1', minutes: 13, cpu: 50 }), ctx);
    expect(h.alerts.map((a) => [a.firedMs, a.flapping, a.settled])).toEqual([
      [at(0), false, 0],
      [at(2), false, 1],
    ]);
    // Settled and nothing left to remember: the row goes.
    await restarted.handleBatch(batch(6, { host: 'web-1', minutes: 14, cpu: 50 }), ctx);
    expect(h.states.has('org_1/web-1/rul_flap')).toBe(false);
  });

  it('tells the store which watched metrics each host sent, for the rules with no data on whose scope matches', async () => {
    const h = harness([
      buildLiveRule({ id: 'rul_plain' }),
      buildLiveRule({ id: 'rul_nd', noDataMinutes: 5 }),
      buildLiveRule({ id: 'rul_nd_prod', noDataMinutes: 5, scope: { env: 'prod' } }),
    ]);
    await h.evaluator.handleBatch(
      batch(
        0,
        { host: 'web-1', minutes: 1, cpu: 10, tags: { env: 'prod' } },
        { host: 'web-1', minutes: 2, cpu: 20, tags: { env: 'prod' } },
        { host: 'web-2', minutes: 1, cpu: 10, tags: { env: 'dev' } },
        { host: 'web-3', minutes: 1 },
      ),
      ctx,
    );
    expect(h.calls.commits[0]?.seen).toEqual([
      {
        orgId: 'org_1',
        host: 'web-1',
        metric: 'cpu_percent',
        tags: { env: 'prod' },
        sampleMs: at(2),
        ruleIds: ['rul_nd', 'rul_nd_prod'],
      },
      {
        orgId: 'org_1',
        host: 'web-2',
        metric: 'cpu_percent',
        tags: { env: 'dev' },
        sampleMs: at(1),
        ruleIds: ['rul_nd'],
      },
    ]);
    // The evaluator's clock, not the samples' time.
    expect(h.calls.commits[0]?.seenAtMs).toBe(0);
    // Written again only once the refresh period passed on the evaluator's clock.
    await h.evaluator.handleBatch(batch(4, { host: 'web-2', minutes: 3, cpu: 10 }), ctx);
    expect(h.calls.commits[1]?.seen).toBeUndefined();
    h.setClock(15_000);
    await h.evaluator.handleBatch(batch(5, { host: 'web-2', minutes: 4, cpu: 10 }), ctx);
    expect(h.calls.commits[2]).toMatchObject({
      seen: [{ host: 'web-2', sampleMs: at(4) }],
      seenAtMs: 15_000,
    });
    const quiet = harness([buildLiveRule({ id: 'rul_plain' })]);
    await quiet.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 1, cpu: 10 }), ctx);
    expect(quiet.calls.commits[0]?.seen).toBeUndefined();
  });

  it('loads nothing for an organization without rules', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    await h.evaluator.handleBatch(
      batch(0, { host: 'web-9', org: 'org_9', minutes: 0, cpu: 99 }),
      ctx,
    );
    expect(h.calls.loadHosts).toEqual([]);
    expect(h.offsets.get(0)).toBe(1);
  });
});

// ---- property: batching, caching, restarts and replays change nothing -----------------------

type Step = { host: string; minutes: number; cpu: number };

/** Each (rule, host)'s events when its samples go straight through evaluateSample. */
function straightEvents(rules: readonly LiveRule[], steps: readonly Step[]) {
  const windows = new Map<string, WindowState>();
  const events: (WindowEvent & { key: string })[] = [];
  for (const step of steps) {
    for (const r of rules) {
      const key = `org_1/${step.host}/${r.id}`;
      const result = evaluateSample(r, windows.get(key), {
        timeMs: at(step.minutes),
        value: step.cpu,
      });
      windows.set(key, result.state);
      events.push(...result.events.map((event) => ({ ...event, key })));
    }
  }
  return events;
}

/** The alerts those events make, as the fake store keeps them. */
function alertsOf(events: ReturnType<typeof straightEvents>) {
  const alerts: {
    key: string;
    value: number;
    startedMs: number;
    firedMs: number;
    resolvedMs: number | null;
    flapping: boolean;
    settled: number;
  }[] = [];
  for (const event of events) {
    const open = alerts.find((a) => a.key === event.key && a.resolvedMs === null);
    if (event.type === 'fire') {
      alerts.push({
        key: event.key,
        value: event.value,
        startedMs: event.startedMs,
        firedMs: event.firedMs,
        resolvedMs: null,
        flapping: event.flapping === true,
        settled: 0,
      });
    } else if (event.type === 'resolve') {
      if (open !== undefined) {
        open.resolvedMs = event.resolvedMs;
        open.flapping ||= event.flapping === true;
      }
    } else {
      const target = event.firing
        ? open
        : alerts.filter((a) => a.key === event.key).sort((a, b) => b.firedMs - a.firedMs)[0];
      if (target !== undefined) {
        target.flapping = false;
        target.settled++;
      }
    }
  }
  return alerts;
}

describe('createAlertEvaluator over random streams', () => {
  const rules = [
    buildLiveRule({ id: 'rul_now', durationMinutes: 0, threshold: 50 }),
    // Rule options: hysteresis and keep-firing-for, and flap detection (ok windows with flap
    // data are kept as windows of their own beside the group's mark).
    buildLiveRule({
      id: 'rul_deep',
      durationMinutes: 0,
      threshold: 50,
      recoveryThreshold: 49.5,
      keepFiringForMinutes: 1,
      flapping: { windowMinutes: 8, maxTransitions: 2 },
    }),
    buildLiveRule({
      id: 'rul_flap',
      durationMinutes: 0,
      threshold: 50,
      condition: 'greater_than_or_equal',
      flapping: { windowMinutes: 6, maxTransitions: 2 },
    }),
    buildLiveRule({
      id: 'rul_slow',
      durationMinutes: 2,
      threshold: 50,
      condition: 'greater_than_or_equal',
    }),
  ];
  const steps = fc.array(
    fc.record({
      host: fc.constantFrom('a', 'b', 'c'),
      minutes: fc.integer({ min: 0, max: 19 }).map((half) => half / 2),
      cpu: fc.constantFrom(49, 50, 51),
    }),
    { maxLength: 50 },
  );
  const sizes = fc.array(fc.integer({ min: 1, max: 8 }), { minLength: 1, maxLength: 20 });

  /** The alerts the evaluator stored, as alertsOf lists them. */
  const storedAlerts = (h: ReturnType<typeof harness>) =>
    h.alerts.map(({ status: _status, ...a }) => ({
      key: keyOf(a),
      value: a.value,
      startedMs: a.startedMs,
      firedMs: a.firedMs,
      resolvedMs: a.resolvedMs,
      flapping: a.flapping,
      settled: a.settled,
    }));

  it('makes the alerts of a straight evaluation in one process, whatever the order, batches, failed commits and replays', async () => {
    await fc.assert(
      fc.asyncProperty(
        steps,
        sizes,
        fc.array(fc.constantFrom('continue', 'replay', 'fail'), { maxLength: 20 }),
        async (steps, sizes, actions) => {
          const h = harness(rules);
          let offset = 0;
          for (let i = 0; offset < steps.length; i++) {
            const size = sizes[i % sizes.length]!;
            const chunk = batch(offset, ...steps.slice(offset, offset + size));
            const action = actions[i % Math.max(1, actions.length)] ?? 'continue';
            if (action === 'fail') {
              h.failNextCommit(dependencyUnavailable('The database', 1, new Error('transient')));
              await expect(h.evaluator.handleBatch(chunk, ctx)).rejects.toMatchObject({
                code: 'dependency_unavailable',
              });
            }
            await h.evaluator.handleBatch(chunk, ctx);
            if (action === 'replay') await h.evaluator.handleBatch(chunk, ctx);
            offset += size;
          }
          expect(storedAlerts(h)).toEqual(alertsOf(straightEvents(rules, steps)));
        },
      ),
      { numRuns: 300 },
    );
  });

  it('makes the alerts of a straight evaluation across restarts, evictions, rules added, scopes, failed commits and replays', async () => {
    // Each rule applies to the samples of the batches from the one where it was added on.
    const pool = [
      { rule: buildLiveRule({ id: 'rul_now', durationMinutes: 0, threshold: 50 }), scoped: false },
      {
        rule: buildLiveRule({
          id: 'rul_prod',
          durationMinutes: 1,
          threshold: 50,
          scope: { env: 'prod' },
        }),
        scoped: true,
      },
      {
        rule: buildLiveRule({
          id: 'rul_late',
          durationMinutes: 1,
          threshold: 50,
          condition: 'greater_than_or_equal',
        }),
        scoped: false,
      },
      {
        rule: buildLiveRule({
          id: 'rul_flap_prod',
          durationMinutes: 0,
          threshold: 50,
          scope: { env: 'prod' },
          recoveryThreshold: 49.5,
          keepFiringForMinutes: 1,
          flapping: { windowMinutes: 6, maxTransitions: 2 },
        }),
        scoped: true,
      },
      {
        rule: buildLiveRule({
          id: 'rul_late_prod',
          durationMinutes: 0,
          threshold: 50,
          scope: { env: 'prod' },
        }),
        scoped: true,
      },
    ];
    const taggedSteps = fc.array(
      fc.record({
        host: fc.constantFrom('a', 'b', 'c'),
        minutes: fc.integer({ min: 0, max: 19 }).map((half) => half / 2),
        cpu: fc.constantFrom(49, 50, 51),
        env: fc.constantFrom('prod', 'staging'),
      }),
      { maxLength: 50 },
    );
    await fc.assert(
      fc.asyncProperty(
        taggedSteps,
        sizes,
        fc.array(fc.constantFrom('continue', 'restart', 'replay', 'fail'), { maxLength: 20 }),
        fc.tuple(fc.integer({ min: 0, max: 10 }), fc.integer({ min: 0, max: 10 })),
        async (steps, sizes, actions, [lateAt, lateProdAt]) => {
          const addedAt = new Map([
            ['rul_now', 0],
            ['rul_prod', 0],
            ['rul_flap_prod', 0],
            ['rul_late', lateAt],
            ['rul_late_prod', lateProdAt],
          ]);
          // Generations in the order the rules were added, as the database hands them out.
          const ordered = [...pool].sort(
            (x, y) => addedAt.get(x.rule.id)! - addedAt.get(y.rule.id)!,
          );
          const rules = ordered.map(({ rule: r }, i) => ({ ...r, generation: i + 1 }));
          const liveAt = (batchIndex: number) =>
            rules.filter((r) => addedAt.get(r.id)! <= batchIndex);

          const h = harness(liveAt(0), { maxCachedHostsPerPartition: 2 });
          let evaluator = h.evaluator;
          const expected: (WindowEvent & { key: string })[] = [];
          const windows = new Map<string, WindowState>();
          let offset = 0;
          for (let i = 0; offset < steps.length; i++) {
            h.setRules(liveAt(i));
            const size = sizes[i % sizes.length]!;
            const chunkSteps = steps.slice(offset, offset + size);
            for (const step of chunkSteps) {
              for (const r of liveAt(i)) {
                if (Object.keys(r.scope).length > 0 && step.env !== 'prod') continue;
                const key = `org_1/${step.host}/${r.id}`;
                const result = evaluateSample(r, windows.get(key), {
                  timeMs: at(step.minutes),
                  value: step.cpu,
                });
                windows.set(key, result.state);
                expected.push(...result.events.map((event) => ({ ...event, key })));
              }
            }
            const chunk = batch(
              offset,
              ...chunkSteps.map(({ env, ...step }) => ({ ...step, tags: { env } })),
            );
            const action = actions[i % Math.max(1, actions.length)] ?? 'continue';
            if (action === 'fail') {
              h.failNextCommit(dependencyUnavailable('The database', 1, new Error('transient')));
              await expect(evaluator.handleBatch(chunk, ctx)).rejects.toMatchObject({
                code: 'dependency_unavailable',
              });
            }
            await evaluator.handleBatch(chunk, ctx);
            if (action === 'replay') await evaluator.handleBatch(chunk, ctx);
            if (action === 'restart') evaluator = h.newEvaluator();
            offset += size;
          }
          const byKey = (
            a: { key: string; firedMs: number },
            b: { key: string; firedMs: number },
          ) => a.key.localeCompare(b.key) || a.firedMs - b.firedMs;
          expect(storedAlerts(h).sort(byKey)).toEqual(alertsOf(expected).sort(byKey));
        },
      ),
      { numRuns: 500 },
    );
  });
});
