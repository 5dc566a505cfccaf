import type { RuleGroupStateStore } from '@monitor/db';
import type { Logger } from '@monitor/platform';
import type { RuleGroup, RuleGroupEvaluation, RuleGroupState } from '@monitor/rules';
import { alertsToSend, parseRuleGroup } from '@monitor/rules';
import { ruleGroupAlertChanges } from './rule-group-alert-changes.js';
import type { RuleGroupRef } from './rule-group-schedule.js';
import { ruleGroupId, ruleGroupSlotMs } from './rule-group-schedule.js';

export type RuleGroupSchedulerDeps = {
  store: Pick<
    RuleGroupStateStore,
    'listAllGroups' | 'loadGroup' | 'listGroupAlerts' | 'saveEvaluation'
  >;
  /** Evaluates `group` of the organization at `timeMs` (`evaluateRuleGroup` on its series). */
  evaluate(
    orgId: string,
    group: RuleGroup,
    state: RuleGroupState,
    timeMs: number,
  ): Promise<RuleGroupEvaluation>;
  /**
   * Writes what an evaluation recorded (series, ALERTS, staleness markers) through the write
   * path; resolves once accepted. Called before the state is saved, so that a crash in between
   * repeats the evaluation (a replay: storage keeps one sample per series and time).
   */
  writeSamples(group: RuleGroupRef, evaluation: RuleGroupEvaluation, timeMs: number): Promise<void>;
  /** Whether this replica owns the group now (its partition of the samples topic is assigned). */
  owns(group: RuleGroupRef): boolean;
  /**
   * Resolves once the samples accepted before the call are stored, or once waiting for them
   * took too long (then the evaluation reads what is there). Evaluations wait for it, as
   * Prometheus' rules see every sample its remote-write receiver answered before their time.
   * Must not throw.
   */
  awaitWrites(): Promise<void>;
  clock: { nowMs(): number };
  logger: Logger;
  /** Told of every finished evaluation, for metrics. Must not throw. */
  onEvaluated?(outcome: {
    durationMs: number;
    lagMs: number;
    /** The group's rules, each evaluated once. */
    rules: number;
    failedRules: number;
  }): void;
};

export type RuleGroupSchedulerOptions = {
  /** A group without its own `interval` (RULE_EVALUATION_INTERVAL_SECONDS). */
  defaultIntervalMs: number;
  /** How often the list of groups is read again (a new group starts within about this). */
  refreshIntervalMs: number;
  /** Evaluations in flight at once; the others wait for a later tick. */
  maxConcurrentEvaluations: number;
  /** Prometheus' resend delay: the least time between two sends of an alert to Alertmanagers. */
  resendDelayMs: number;
};

export type RuleGroupScheduler = {
  /**
   * One pass: reads the group list when due, starts the evaluation of every owned group whose
   * slot came and was not evaluated yet; resolves once those evaluations settled.
   */
  tick(): Promise<void>;
};

type KnownGroup = {
  ref: RuleGroupRef;
  definition: string;
  /** Undefined when the stored YAML does not parse (the ruler API does not store such groups). */
  group: RuleGroup | undefined;
  /** The slot this replica last saw evaluated (by itself or, read back, by another owner). */
  lastEvaluationMs: number | undefined;
};

function parseStored(definition: string): RuleGroup | undefined {
  const parsed = parseRuleGroup(definition);
  return parsed.ok ? parsed.groups[0] : undefined;
}

/**
 * Evaluates every Prometheus rule group this replica owns at its interval, on the same
 * hash-offset slots as Prometheus. Each evaluation reads the group's YAML and state afresh (a
 * change through the ruler API applies at the next evaluation; a group that moved here goes on
 * from its previous owner's state) and saves the new state, with what it changes in the
 * alerts of the group's rules (fired, resolved, re-sent to Alertmanagers), only if nobody else
 * saved a newer one and the group did not change meanwhile: two owners during a rebalance
 * cannot both advance it, and no alert fires or resolves twice.
 */
export function createRuleGroupScheduler(
  deps: RuleGroupSchedulerDeps,
  options: RuleGroupSchedulerOptions,
): RuleGroupScheduler {
  const known = new Map<string, KnownGroup>();
  const running = new Map<string, Promise<void>>();
  let refreshedAtMs = Number.NEGATIVE_INFINITY;
  /** The list read in progress, shared by the ticks that come meanwhile. */
  let refreshing: Promise<void> | undefined;

  async function refresh(): Promise<void> {
    const listed = await deps.store.listAllGroups();
    const seen = new Set<string>();
    for (const { orgId, namespace, name, definition } of listed) {
      const id = ruleGroupId({ orgId, namespace, name });
      seen.add(id);
      const entry = known.get(id);
      if (entry !== undefined && entry.definition === definition) continue;
      known.set(id, {
        ref: { orgId, namespace, name },
        definition,
        group: parseStored(definition),
        lastEvaluationMs: entry?.lastEvaluationMs,
      });
    }
    for (const id of known.keys()) if (!seen.has(id)) known.delete(id);
  }

  function slotOf(entry: KnownGroup, group: RuleGroup, nowMs: number): number {
    return ruleGroupSlotMs(entry.ref, group.intervalMs ?? options.defaultIntervalMs, nowMs);
  }

  async function evaluateGroup(
    id: string,
    entry: KnownGroup,
    nowMs: number,
    writesStored: Promise<void>,
  ): Promise<void> {
    await writesStored;
    const loaded = await deps.store.loadGroup(entry.ref);
    if (loaded === undefined) {
      known.delete(id);
      return;
    }
    const group =
      loaded.definition === entry.definition ? entry.group : parseStored(loaded.definition);
    if (group === undefined) return;
    const slotMs = slotOf(entry, group, nowMs);
    const previous = loaded.evaluation;
    if (previous !== undefined && previous.lastEvaluationMs >= slotMs) {
      entry.lastEvaluationMs = previous.lastEvaluationMs;
      return;
    }
    const startedMs = deps.clock.nowMs();
    const state = (previous?.state as RuleGroupState | undefined) ?? { rules: {} };
    const evaluation = await deps.evaluate(entry.ref.orgId, group, state, slotMs);
    await deps.writeSamples(entry.ref, evaluation, slotMs);
    const sent = alertsToSend(group, evaluation, slotMs, {
      resendDelayMs: options.resendDelayMs,
      intervalMs: group.intervalMs ?? options.defaultIntervalMs,
    });
    const rows = group.rules.some((rule) => rule.kind === 'alert')
      ? await deps.store.listGroupAlerts(entry.ref, slotMs)
      : [];
    const alerts = ruleGroupAlertChanges({ group, ...sent, rows, timeMs: slotMs });
    const durationMs = deps.clock.nowMs() - startedMs;
    const saved =
      deps.owns(entry.ref) &&
      (await deps.store.saveEvaluation(
        entry.ref,
        { lastEvaluationMs: previous?.lastEvaluationMs, revision: loaded.revision },
        { state: sent.state, lastEvaluationMs: slotMs, durationMs, health: evaluation.health },
        alerts,
      ));
    if (!saved) {
      // Another owner got there first, this one lost the group, or the group changed: read it
      // back next time.
      entry.lastEvaluationMs = undefined;
      deps.logger.info(
        { group: entry.ref, slotMs },
        'rule group evaluated by another owner or changed meanwhile; this evaluation is dropped',
      );
      return;
    }
    entry.lastEvaluationMs = slotMs;
    deps.onEvaluated?.({
      durationMs,
      lagMs: startedMs - slotMs,
      rules: group.rules.length,
      failedRules: evaluation.health.filter((h) => h.health === 'err').length,
    });
  }

  return {
    async tick() {
      const nowMs = deps.clock.nowMs();
      if (nowMs - refreshedAtMs >= options.refreshIntervalMs) {
        await (refreshing ??= refresh()
          .then(() => {
            refreshedAtMs = nowMs;
          })
          .finally(() => (refreshing = undefined)));
      }
      const due: { id: string; entry: KnownGroup; missedSlotMs: number }[] = [];
      for (const [id, entry] of known) {
        if (!deps.owns(entry.ref)) {
          // Whoever owns it now may move it on: read it back if it comes back.
          entry.lastEvaluationMs = undefined;
          continue;
        }
        if (entry.group === undefined || running.has(id)) continue;
        const slotMs = slotOf(entry, entry.group, nowMs);
        if (entry.lastEvaluationMs !== undefined && entry.lastEvaluationMs >= slotMs) continue;
        const intervalMs = entry.group.intervalMs ?? options.defaultIntervalMs;
        // Never evaluated here (or read back from another owner): as if last at the epoch.
        due.push({ id, entry, missedSlotMs: (entry.lastEvaluationMs ?? 0) + intervalMs });
      }
      // Oldest missed slot first: taken in list order, the first groups would fill every free
      // place at each of their slots whenever evaluations fall behind, and the last never run.
      due.sort((a, b) => a.missedSlotMs - b.missedSlotMs);
      const free = Math.max(0, options.maxConcurrentEvaluations - running.size);
      const starting = due.slice(0, free);
      // One wait for the writes shared by the groups whose slot came in this tick.
      const writesStored = starting.length > 0 ? deps.awaitWrites() : Promise.resolve();
      const started: Promise<void>[] = [];
      for (const { id, entry } of starting) {
        const evaluation = evaluateGroup(id, entry, nowMs, writesStored)
          .catch((err: unknown) =>
            deps.logger.warn(
              { err, group: entry.ref },
              'rule group evaluation failed; retried at the next tick',
            ),
          )
          .finally(() => running.delete(id));
        running.set(id, evaluation);
        started.push(evaluation);
      }
      await Promise.all(started);
    },
  };
}
