import type { Cause, Scenario } from './scenario.js';

/** What an analysis answered, as stored: the verdict and the ranked hypotheses (strongest first). */
export type ScenarioAnswer = {
  /** The named cause, or null when inconclusive. */
  cause: Cause | null;
  /** The hypotheses in rank order (the first finding's `evidence.ranked`: at most five). */
  ranked: readonly Cause[];
};

const same = (a: Cause, b: Cause) => a.kind === b.kind && a.subject === b.subject;

/**
 * Whether an analysis got the scenario right, by the scenario's own terms: the named cause for a
 * top-1 expectation; every expected cause among the first k ranked hypotheses for a top-k one;
 * no cause named for an inconclusive one.
 */
export function scenarioHit(scenario: Scenario, answer: ScenarioAnswer): boolean {
  const { expected } = scenario;
  if (expected.kind === 'inconclusive') return answer.cause === null;
  const topK = expected.topK ?? 1;
  const primary = { kind: expected.kind, subject: expected.subject };
  if (topK === 1) return answer.cause !== null && same(answer.cause, primary);
  const first = answer.ranked.slice(0, topK);
  return [primary, ...(expected.also ?? [])].every((cause) => first.some((r) => same(r, cause)));
}

/** The expectation in words: `process gzip`, `top 2: process a, process b`, `inconclusive`. */
export function describeExpected(scenario: Scenario): string {
  const { expected } = scenario;
  if (expected.kind === 'inconclusive') return 'inconclusive';
  const causes = [expected, ...(expected.also ?? [])].map((c) => `${c.kind} \`${c.subject}\``);
  const topK = expected.topK ?? 1;
  return topK === 1 ? causes.join(', ') : `top ${topK}: ${causes.join(', ')}`;
}
