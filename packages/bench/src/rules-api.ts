import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { sumOf } from './writer-metrics.js';

/**
 * The alert rules of a run, through the API as a user creates them, and the wait until the
 * evaluator has them: what the alert and failover benchmarks share.
 */

/** POST /api/v1/alerts/rules with `rule` (the API's field names); the new rule's id. */
export async function createRule(
  apiBaseUrl: string,
  headers: Record<string, string>,
  rule: object,
): Promise<string> {
  const response = await fetch(new URL('/api/v1/alerts/rules', apiBaseUrl), {
    method: 'POST',
    headers,
    body: JSON.stringify(rule),
  });
  const text = await response.text();
  if (response.status !== 201)
    throw new Error(`POST /api/v1/alerts/rules answered ${response.status}: ${text.slice(0, 300)}`);
  return (JSON.parse(text) as { id: string }).id;
}

/** Creates `rules`, `concurrency` requests at a time; their ids, in the order of `rules`. */
export async function createRules(
  apiBaseUrl: string,
  headers: Record<string, string>,
  rules: readonly object[],
  concurrency = 1,
): Promise<string[]> {
  const ids: string[] = new Array<string>(rules.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    for (let i = next++; i < rules.length; i = next++)
      ids[i] = await createRule(apiBaseUrl, headers, rules[i] ?? {});
  };
  await Promise.all(Array.from({ length: concurrency }, () => worker()));
  return ids;
}

const rulesLoadedTimeoutMs = 60_000;

/** Polls an evaluator's `evaluator_rules` gauge until it shows at least `count` rules. */
export async function waitForRulesLoaded(evaluatorBaseUrl: string, count: number): Promise<void> {
  const deadline = performance.now() + rulesLoadedTimeoutMs;
  let seen = 'nothing';
  while (performance.now() < deadline) {
    const response = await fetch(new URL('/metrics', evaluatorBaseUrl));
    const text = await response.text();
    const exposed = /^evaluator_rules[ {]/m.test(text);
    const loaded = sumOf(text, 'evaluator_rules');
    if (exposed && loaded >= count) return;
    seen = exposed
      ? `evaluator_rules ${loaded}`
      : `${response.status}, no evaluator_rules in: ${text.slice(0, 200)}`;
    await sleep(100);
  }
  throw new Error(
    `an evaluator did not load ${count} rules within ${rulesLoadedTimeoutMs} ms (last seen: ${seen})`,
  );
}
