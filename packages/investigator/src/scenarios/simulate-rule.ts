import { conditionHolds } from '@monitor/schemas';
import type { AlertCondition } from '@monitor/schemas';
import type { TimedValue } from '../incident-input.js';

export type SimulatedFiring = {
  startedAtMs: number;
  firedAtMs: number;
  resolvedAtMs: number | null;
  /** The sample value that fired. */
  value: number;
};

/**
 * The alerts a rule fires on one host's samples (time order), by the contract's evaluation
 * rules: the condition must hold on every sample from the first breaching one up to a sample at
 * least duration_minutes later; one good sample clears a pending window or resolves the alert.
 * The scenarios use it to know, without the pipeline, which alert the pipeline will fire.
 */
export function simulateRule(
  rule: { condition: AlertCondition; threshold: number; duration_minutes: number },
  points: readonly TimedValue[],
): SimulatedFiring[] {
  const firings: SimulatedFiring[] = [];
  let startedAtMs: number | undefined;
  let firing: SimulatedFiring | undefined;
  for (const { timeMs, value } of points) {
    const breaching = conditionHolds(rule.condition, value, rule.threshold);
    if (!breaching) {
      if (firing !== undefined) firing.resolvedAtMs = timeMs;
      firing = undefined;
      startedAtMs = undefined;
      continue;
    }
    if (firing !== undefined) continue;
    startedAtMs ??= timeMs;
    if (timeMs >= startedAtMs + rule.duration_minutes * 60_000) {
      firing = { startedAtMs, firedAtMs: timeMs, resolvedAtMs: null, value };
      firings.push(firing);
    }
  }
  return firings;
}
