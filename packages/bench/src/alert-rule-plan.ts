import type { AlertCondition } from '@monitor/schemas';
import { fleetMetricNames } from './fleet.js';

/** A POST /api/v1/alerts/rules body. */
export type RuleBody = {
  name: string;
  metric: string;
  condition: AlertCondition;
  threshold: number;
  duration_minutes: number;
  severity: 'critical' | 'warning' | 'info';
  scope?: Record<string, string>;
};

/** The fleet's metrics are percentages: every value it sends lies in this range. */
export const fleetValueRange = { min: 0, max: 100 } as const;

/** The probes' own metric, which no fleet host sends. */
export const probeMetric = 'probe_value';
const probeThreshold = 50;
/** A probe sample that breaches its rule, and one that clears it. */
export const probeBreachValue = 90;
export const probeClearValue = 10;
/** The tag a probe rule's scope names, with the probe host as its value. */
export const probeScopeTag = 'bench_probe';

/**
 * Scopes that match part of the fleet (fleet.ts tags its hosts with these values), so some
 * rules are evaluated on a subset of hosts, as real rules are.
 */
const fleetScopes: readonly Record<string, string>[] = [
  { environment: 'production' },
  { region: 'eu-west-1' },
  { service: 'api' },
  { environment: 'staging', region: 'us-east-1' },
];
/** One rule in this many is scoped; the others apply to every fleet host. */
const scopedEvery = 5;

/**
 * `count` rules on the fleet's metrics that no fleet sample can breach, whatever the condition
 * (`not_equal` would breach on almost every sample, so it is left out): the evaluator evaluates
 * them on every sample of their metric and never fires.
 */
export function planFleetRules(count: number): RuleBody[] {
  const severities = ['critical', 'warning', 'info'] as const;
  const durations = [0, 1, 5, 15] as const;
  const { min, max } = fleetValueRange;
  return Array.from({ length: count }, (_, i): RuleBody => {
    const step = Math.floor(i / 5);
    const [condition, threshold] = (
      [
        ['greater_than', max + step],
        ['greater_than_or_equal', max + 0.5 + step],
        ['less_than', min - step],
        ['less_than_or_equal', min - 0.5 - step],
        ['equal', max + 100 + step],
      ] as const
    )[i % 5] ?? ['greater_than', max];
    const metric = fleetMetricNames[i % fleetMetricNames.length] ?? 'cpu_percent';
    const scope =
      i % scopedEvery === scopedEvery - 1 ? fleetScopes[i % fleetScopes.length] : undefined;
    return {
      name: `fleet ${metric} ${condition} ${threshold} (${i + 1})`,
      metric,
      condition,
      threshold,
      duration_minutes: durations[i % durations.length] ?? 0,
      severity: severities[i % severities.length] ?? 'info',
      ...(scope === undefined ? {} : { scope }),
    };
  });
}

/** One critical rule per probe host, scoped to that host through its `bench_probe` tag. */
export function planProbeRules(probeHosts: readonly string[], durationMinutes: number): RuleBody[] {
  return probeHosts.map((host) => ({
    name: `probe ${host}`,
    metric: probeMetric,
    condition: 'greater_than',
    threshold: probeThreshold,
    duration_minutes: durationMinutes,
    severity: 'critical',
    scope: { [probeScopeTag]: host },
  }));
}

/** A rule body with every rule option (docs/api.md#rule-options). */
type OptionsRuleBody = RuleBody & {
  recovery_threshold?: number;
  keep_firing_for_minutes?: number;
  flapping?: { window_minutes: number; max_transitions: number };
  no_data_minutes?: number;
  no_data_state?: 'alerting' | 'ok' | 'keep';
};

const ruleOptionFields = [
  'recovery_threshold',
  'keep_firing_for_minutes',
  'flapping',
  'no_data_minutes',
] as const;

export function usesRuleOptions(rule: OptionsRuleBody): boolean {
  return ruleOptionFields.some((field) => rule[field] !== undefined);
}

/**
 * Turns the rule options on for four fleet rules in ten: hysteresis with keep-firing-for
 * (on the non-breaching side of the threshold, as the API insists; not on `equal`), flap
 * detection, no data (the fleet keeps sending, so it watches and never fires: the cost is the
 * last-seen bookkeeping and the sweeps), and one in ten with all of them.
 */
export function withRuleOptions(rules: readonly RuleBody[]): OptionsRuleBody[] {
  return rules.map((rule, i): OptionsRuleBody => {
    const kind = i % 10;
    const hysteresis: Partial<OptionsRuleBody> =
      rule.condition === 'equal' || rule.condition === 'not_equal'
        ? {}
        : {
            recovery_threshold: rule.condition.startsWith('greater')
              ? rule.threshold - 5
              : rule.threshold + 5,
            keep_firing_for_minutes: 5,
          };
    const flapping = { flapping: { window_minutes: 10, max_transitions: 3 } };
    const noData = { no_data_minutes: 10, no_data_state: 'alerting' as const };
    if (kind === 0) return { ...rule, ...hysteresis };
    if (kind === 1) return { ...rule, ...flapping };
    if (kind === 2) return { ...rule, ...noData };
    if (kind === 3) return { ...rule, ...hysteresis, ...flapping, ...noData };
    return rule;
  });
}
