import type { LiveRule } from '@monitor/db';
import { conditionHolds } from '@monitor/schemas';

/**
 * Flap detection of one (rule, host): the sample times of its latest state changes (fires and
 * resolves), oldest first, none older than the rule's flapping window and at most
 * `maxTransitions + 1` of them (enough to tell "more than maxTransitions within the window"),
 * and whether it is marked flapping (its notifications held until it is stable for the window).
 */
type FlapState = { changesMs: number[]; flapping: boolean };

/**
 * The state of one (rule, host) window, checkpointed as jsonb: plain data, versioned so a
 * future shape can tell old checkpoints apart (version 1, without the optional fields, is still
 * read). Times are sample times, epoch milliseconds. `flap` is absent when the rule has no
 * flapping setting or nothing of it is worth keeping.
 */
export type WindowState =
  /** Not breaching (the last evaluated sample was good, or the alert resolved). */
  | { v: 2; status: 'ok'; lastSampleMs: number; flap?: FlapState }
  /** Breaching since `startedMs`, not long enough to fire yet. */
  | { v: 2; status: 'pending'; lastSampleMs: number; startedMs: number; flap?: FlapState }
  /**
   * Fired: the alert is active. `clearStartMs`, when set, is the time of the first sample of an
   * unbroken run meeting the resolve condition (keep_firing_for_minutes): it resolves at the
   * first such sample at or after `clearStartMs + keepFiringForMinutes`.
   */
  | {
      v: 2;
      status: 'firing';
      lastSampleMs: number;
      startedMs: number;
      clearStartMs?: number;
      flap?: FlapState;
    };

/**
 * A transition of the (rule, host). `flapping: true` on a fire or resolve: the (rule, host) is
 * flapping at that change, so the alert is marked flapping and the change is not notified.
 * `settle`: a flapping (rule, host) was stable for the flapping window; `firing` says where it
 * settled (an active alert, or none), the one message sent for the flapping episode.
 */
export type WindowEvent =
  | { type: 'fire'; startedMs: number; firedMs: number; value: number; flapping?: true }
  | { type: 'resolve'; resolvedMs: number; flapping?: true }
  | { type: 'settle'; settledMs: number; firing: boolean };

/** One value of the rule's metric at a sample time. */
export type MetricSample = { timeMs: number; value: number };

/** How a rule detects flapping (docs/api.md#rule-options, `flapping`). */
type FlappingSetting = { windowMinutes: number; maxTransitions: number };

/**
 * What the window logic reads of a rule. The rule options are optional here (absent is
 * their default: recovery at `threshold`, no keep-firing period, no flap detection).
 */
export type WindowRule = Pick<LiveRule, 'condition' | 'threshold' | 'durationMinutes'> & {
  recoveryThreshold?: number | null;
  keepFiringForMinutes?: number;
  flapping?: FlappingSetting | null;
};

const minuteMs = 60_000;

/** Whether the rule applies to a host sample: it carries the rule's metric and every scope pair. */
export function ruleApplies(
  rule: Pick<LiveRule, 'metric' | 'scope'>,
  sample: { metrics: Readonly<Record<string, number>>; tags: Readonly<Record<string, string>> },
): boolean {
  return Object.hasOwn(sample.metrics, rule.metric) && scopeMatches(rule.scope, sample.tags);
}

/** Whether the tags hold every pair of the scope. */
export function scopeMatches(
  scope: Readonly<Record<string, string>>,
  tags: Readonly<Record<string, string>>,
): boolean {
  // `for in` rather than Object.entries: called per rule group per sample, it allocates nothing.
  for (const key in scope) {
    if (!Object.hasOwn(scope, key)) continue;
    if (!Object.hasOwn(tags, key) || tags[key] !== scope[key]) return false;
  }
  return true;
}

/**
 * Moves one (rule, host) window by one sample (docs/api.md#alert-evaluation, #rule-options).
 * Event time only, no clock: a window started by a breaching sample fires at the first sample,
 * breaching all along, whose time is at least `startedMs + durationMinutes`; one good sample
 * clears a pending window. A firing alert resolves on a sample that does not breach
 * `recoveryThreshold` (default `threshold`); with `keepFiringForMinutes` such a sample starts a
 * clear period that a breaching one cancels, and the alert resolves at the first sample at or
 * after its start + N minutes. Fires and resolves are the (rule, host)'s state changes: more than
 * `flapping.maxTransitions` of them within `flapping.windowMinutes` (of the sample's time) mark
 * it flapping, until a sample at least the window after the last change settles it.
 * A sample whose time is not strictly after the newest one evaluated (older, or an equal time:
 * a replayed duplicate or a second value for the same instant) leaves the state as it is, so a
 * replay can never fire twice and the first value of an instant wins. Returns the same state
 * object when the sample was ignored.
 */
export function evaluateSample(
  rule: WindowRule,
  state: WindowState | undefined,
  sample: MetricSample,
): { state: WindowState; events: WindowEvent[] } {
  if (state !== undefined && sample.timeMs <= state.lastSampleMs) return { state, events: [] };
  const timeMs = sample.timeMs;
  const events: WindowEvent[] = [];
  const flapping = rule.flapping ?? null;
  let flap = flapping === null ? undefined : recentFlap(state?.flap, flapping, timeMs);
  if (flap?.flapping === true && flap.changesMs.length === 0) {
    // No change within the window: stable for the window since the last one.
    events.push({ type: 'settle', settledMs: timeMs, firing: state?.status === 'firing' });
    flap = { changesMs: [], flapping: false };
  }
  const next = nextStatus(rule, state, sample);
  if (next.change !== undefined && flapping !== null) {
    const changesMs = [...(flap?.changesMs ?? []), timeMs].slice(-(flapping.maxTransitions + 1));
    flap = {
      changesMs,
      flapping: flap?.flapping === true || changesMs.length > flapping.maxTransitions,
    };
  }
  const held = flap?.flapping === true ? { flapping: true as const } : {};
  if (next.change === 'fire') {
    events.push({ type: 'fire', ...next.fired, value: sample.value, ...held });
  } else if (next.change === 'resolve') {
    events.push({ type: 'resolve', resolvedMs: timeMs, ...held });
  }
  const kept = flap !== undefined && (flap.flapping || flap.changesMs.length > 0) ? { flap } : {};
  return { state: { ...next.state, ...kept }, events };
}

const ruleDefaults = { recoveryThreshold: null, keepFiringForMinutes: 0 };

/** The window's next state (without flap data) and the change a sample makes, if any. */
function nextStatus(
  rule: WindowRule,
  state: WindowState | undefined,
  sample: MetricSample,
):
  | { state: WindowState; change?: 'resolve' }
  | { state: WindowState; change: 'fire'; fired: { startedMs: number; firedMs: number } } {
  const lastSampleMs = sample.timeMs;
  const { recoveryThreshold, keepFiringForMinutes } = { ...ruleDefaults, ...rule };
  if (state?.status === 'firing') {
    const { startedMs } = state;
    if (conditionHolds(rule.condition, sample.value, recoveryThreshold ?? rule.threshold)) {
      return { state: { v: 2, status: 'firing', lastSampleMs, startedMs } };
    }
    const clearStartMs = state.clearStartMs ?? sample.timeMs;
    if (sample.timeMs >= clearStartMs + keepFiringForMinutes * minuteMs) {
      return { state: { v: 2, status: 'ok', lastSampleMs }, change: 'resolve' };
    }
    return { state: { v: 2, status: 'firing', lastSampleMs, startedMs, clearStartMs } };
  }
  if (!conditionHolds(rule.condition, sample.value, rule.threshold)) {
    return { state: { v: 2, status: 'ok', lastSampleMs } };
  }
  const startedMs = state?.status === 'pending' ? state.startedMs : sample.timeMs;
  if (sample.timeMs >= startedMs + rule.durationMinutes * minuteMs) {
    return {
      state: { v: 2, status: 'firing', lastSampleMs, startedMs },
      change: 'fire',
      fired: { startedMs, firedMs: sample.timeMs },
    };
  }
  return { state: { v: 2, status: 'pending', lastSampleMs, startedMs } };
}

/** The flap data as of `timeMs`: changes older than the window dropped, capped to what counts. */
function recentFlap(
  flap: FlapState | undefined,
  setting: FlappingSetting,
  timeMs: number,
): FlapState | undefined {
  if (flap === undefined) return undefined;
  const sinceMs = timeMs - setting.windowMinutes * minuteMs;
  const changesMs = flap.changesMs
    .filter((changeMs) => changeMs > sinceMs)
    .slice(-(setting.maxTransitions + 1));
  return { changesMs, flapping: flap.flapping };
}

/**
 * Whether a state says nothing beyond "ok at its last sample": the evaluator then need not keep
 * it as a window of its own (the rule group's watermark tells as much).
 */
export function isPlainOk(state: WindowState): boolean {
  return state.status === 'ok' && state.flap === undefined;
}

/**
 * A checkpointed state read back (version 1 or 2; a version 1 state becomes the same state in
 * version 2), or undefined when it is not one this code wrote (an unknown version or a damaged
 * row): the window then starts afresh rather than act on a guess.
 */
export function parseWindowState(json: unknown): WindowState | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const record = json as Record<string, unknown>;
  const { v, status, lastSampleMs, startedMs } = record;
  if ((v !== 1 && v !== 2) || !isTime(lastSampleMs)) return undefined;
  let flap: { flap?: FlapState } = {};
  let clear: { clearStartMs?: number } = {};
  if (v === 2) {
    if (record.flap !== undefined) {
      const parsed = parseFlap(record.flap);
      if (parsed === undefined) return undefined;
      flap = { flap: parsed };
    }
    if (record.clearStartMs !== undefined) {
      if (status !== 'firing' || !isTime(record.clearStartMs)) return undefined;
      clear = { clearStartMs: record.clearStartMs };
    }
  }
  if (status === 'ok') return { v: 2, status, lastSampleMs, ...flap };
  if (status === 'pending' && isTime(startedMs)) {
    return { v: 2, status, lastSampleMs, startedMs, ...flap };
  }
  if (status === 'firing' && isTime(startedMs)) {
    return { v: 2, status, lastSampleMs, startedMs, ...clear, ...flap };
  }
  return undefined;
}

function parseFlap(json: unknown): FlapState | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const { changesMs, flapping } = json as Record<string, unknown>;
  if (typeof flapping !== 'boolean' || !Array.isArray(changesMs)) return undefined;
  if (!changesMs.every(isTime)) return undefined;
  return { changesMs: [...changesMs], flapping };
}

function isTime(value: unknown): value is number {
  return typeof value === 'number' && Number.isFinite(value);
}
