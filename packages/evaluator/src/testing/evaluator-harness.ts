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
import { createLogger } from '@monitor/platform';
import type { SampleMessage } from '@monitor/schemas';
import { encodeSampleMessage, encodeSampleRecord } from '@monitor/schemas';
import type { EvaluatorMetrics } from '../evaluator-metrics.js';
import type { RuleSource } from '../rule-set.js';
import { createAlertEvaluator } from '../alert-evaluator.js';
import type { RuleSet } from '../rule-set.js';
import { createRuleSet } from '../rule-set.js';

/**
 * The alert evaluator's unit tests drive it whole, as the consumer does (`handleBatch` of
 * records), over an in-memory EvaluatorStore with the database adapter's semantics: each test
 * file states the behaviour of one of the evaluator's jobs (decoding, loading hosts, evaluating
 * samples, the partition cache, committing a batch, the batch, the consumer's policy).
 */

const logger = createLogger({ level: 'silent', name: 'test' });
const minuteMs = 60_000;
const t0 = Date.UTC(2026, 10, 22, 12, 0, 0);
export const at = (minutes: number): number => t0 + minutes * minuteMs;
export const topic = 'metrics.samples.v1';

export type Sample = {
  host: string;
  minutes: number;
  cpu?: number;
  org?: string;
  tags?: Record<string, string>;
  /** The tags label the sample's series (an agent protocol's sample). */
  labelled?: true;
};

export function record(offset: number, sample: Sample | null, partition = 0): ConsumedRecord {
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
export function packed(offset: number, samples: Sample[]): ConsumedRecord {
  return {
    ...record(offset, samples[0] ?? null),
    value: encodeSampleRecord(
      samples.map((sample) => record(offset, sample).value ?? Buffer.alloc(0)),
    ),
  };
}

/** Records at consecutive offsets from `first`. */
export function batch(first: number, ...samples: (Sample | null)[]): RecordBatch {
  return {
    topic,
    partition: 0,
    records: samples.map((s, i) => record(first + i, s)),
    logEndOffset: first + samples.length,
  };
}

export const ctx: BatchContext = { heartbeat: () => Promise.resolve(), isStale: () => false };

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

export const keyOf = (key: EvaluatorStateKey): string => `${key.orgId}/${key.host}/${key.ruleId}`;

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
export function ruleSnapshot(rules: LiveRule[], epoch: number) {
  return createRuleSet({ rules, epoch });
}

export type Harness = ReturnType<typeof harness>;

export function harness(initialRules: LiveRule[], options = { maxCachedHostsPerPartition: 1000 }) {
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
