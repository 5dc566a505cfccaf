/** One alert the contract says a host's samples fire; times are sample times, epoch ms. */
export type ExpectedAlert = {
  host: string;
  startedAt: number;
  firedAt: number;
  resolvedAt: number | null;
};

/** One value of the rule's metric at a sample time. */
export type TimedValue = { timeMs: number; value: number };

/**
 * The alerts a `greater_than` rule fires on one host's samples, written plainly from the
 * contract rather than with the evaluator's code: a window opens at the first breaching sample,
 * fires at the first breaching sample at least `durationMinutes` after it, and one good sample
 * clears or resolves it. Samples must be in time order, one per time.
 */
export function expectedAlerts(
  host: string,
  samples: readonly TimedValue[],
  rule: { threshold: number; durationMinutes: number },
): ExpectedAlert[] {
  const alerts: ExpectedAlert[] = [];
  let startedAt: number | undefined;
  let firing: ExpectedAlert | undefined;
  for (const { timeMs: time, value } of samples) {
    if (value > rule.threshold) {
      startedAt ??= time;
      if (firing === undefined && time >= startedAt + rule.durationMinutes * 60_000) {
        firing = { host, startedAt, firedAt: time, resolvedAt: null };
        alerts.push(firing);
      }
    } else {
      if (firing !== undefined) firing.resolvedAt = time;
      firing = undefined;
      startedAt = undefined;
    }
  }
  return alerts;
}
