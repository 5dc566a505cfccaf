import type { LiveRule } from '@monitor/db';
import { conditionHolds } from '@monitor/schemas';

/**
 * The state of one (rule, host) window, checkpointed as jsonb: plain data, versioned so a
 * future shape can tell old checkpoints apart. Times are sample times, epoch milliseconds.
 */
export type WindowState =
  /** Not breaching (the last evaluated sample was good). */
  | { v: 1; status: 'ok'; lastSampleMs: number }
  /** Breaching since `startedMs`, not long enough to fire yet. */
  | { v: 1; status: 'pending'; lastSampleMs: number; startedMs: number }
  /** Fired: the alert is active until a good sample. */
  | { v: 1; status: 'firing'; lastSampleMs: number; startedMs: number };

export type WindowEvent =
  | { type: 'fire'; startedMs: number; firedMs: number; value: number }
  | { type: 'resolve'; resolvedMs: number };

/** One value of the rule's metric at a sample time. */
export type MetricSample = { timeMs: number; value: number };

export type WindowRule = Pick<LiveRule, 'condition' | 'threshold' | 'durationMinutes'>;

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
 * Moves one (rule, host) window by one sample (CONTRACT "Alert evaluation"). Event time only:
 * a window started by a breaching sample fires at the first sample, breaching all along, whose
 * time is at least `startedMs + durationMinutes`; one good sample clears a pending window or
 * resolves a firing one. A sample whose time is not strictly after the newest one evaluated
 * (older, or an equal time: a replayed duplicate or a second value for the same instant) leaves
 * the state as it is, so a replay can never fire twice and the first value of an instant wins.
 * Returns the same state object when the sample was ignored.
 */
export function evaluateSample(
  rule: WindowRule,
  state: WindowState | undefined,
  sample: MetricSample,
): { state: WindowState; events: WindowEvent[] } {
  if (state !== undefined && sample.timeMs <= state.lastSampleMs) return { state, events: [] };
  const lastSampleMs = sample.timeMs;
  if (!conditionHolds(rule.condition, sample.value, rule.threshold)) {
    const events: WindowEvent[] =
      state?.status === 'firing' ? [{ type: 'resolve', resolvedMs: sample.timeMs }] : [];
    return { state: { v: 1, status: 'ok', lastSampleMs }, events };
  }
  if (state?.status === 'firing') return { state: { ...state, lastSampleMs }, events: [] };
  const startedMs = state?.status === 'pending' ? state.startedMs : sample.timeMs;
  if (sample.timeMs >= startedMs + rule.durationMinutes * minuteMs) {
    return {
      state: { v: 1, status: 'firing', lastSampleMs, startedMs },
      events: [{ type: 'fire', startedMs, firedMs: sample.timeMs, value: sample.value }],
    };
  }
  return { state: { v: 1, status: 'pending', lastSampleMs, startedMs }, events: [] };
}

/**
 * A checkpointed state read back, or undefined when it is not one this code wrote (an unknown
 * version or a damaged row): the window then starts afresh rather than act on a guess.
 */
export function parseWindowState(json: unknown): WindowState | undefined {
  if (typeof json !== 'object' || json === null) return undefined;
  const record = json as Record<string, unknown>;
  const { v, status, lastSampleMs, startedMs } = record;
  if (v !== 1 || !Number.isFinite(lastSampleMs) || typeof lastSampleMs !== 'number') {
    return undefined;
  }
  if (status === 'ok') return { v, status, lastSampleMs };
  if ((status === 'pending' || status === 'firing') && typeof startedMs === 'number') {
    return Number.isFinite(startedMs) ? { v, status, lastSampleMs, startedMs } : undefined;
  }
  return undefined;
}
