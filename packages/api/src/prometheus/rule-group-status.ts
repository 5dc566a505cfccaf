import type { EvaluatedRuleGroup } from '@monitor/db';
import type { ActiveAlert, RuleGroup, RuleGroupState } from '@monitor/rules';
import { parseRuleGroup, ruleStateKeys } from '@monitor/rules';
import type { PrometheusAlert, PrometheusRuleGroup } from '@monitor/schemas';

/** Go's zero time, which Prometheus reports for a rule or group never evaluated. */
const goZeroTime = '0001-01-01T00:00:00Z';

/** A time as Go's `time.Time` marshals to JSON (RFC 3339, fraction without trailing zeros). */
function goTime(ms: number): string {
  return new Date(ms).toISOString().replace(/\.?0+Z$/, 'Z');
}

/** `strconv.FormatFloat(v, 'e', -1, 64)`: shortest digits, exponent of at least two digits. */
export function goExponentFloat(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  const text = value.toExponential().replace(/e([+-])(\d)$/, 'e$10$2');
  return Object.is(value, -0) ? `-${text}` : text;
}

function apiAlert(alert: ActiveAlert): PrometheusAlert {
  return {
    labels: alert.labels,
    annotations: alert.annotations,
    state: alert.state,
    activeAt: goTime(alert.activeAtMs),
    ...(alert.keepFiringSinceMs === null
      ? {}
      : { keepFiringSince: goTime(alert.keepFiringSinceMs) }),
    value: goExponentFloat(alert.value),
  };
}

const stateRank = { inactive: 0, pending: 1, firing: 2 } as const;

type ParsedGroup = { stored: EvaluatedRuleGroup; group: RuleGroup };

function parsed(groups: readonly EvaluatedRuleGroup[]): ParsedGroup[] {
  return groups.flatMap((stored) => {
    const result = parseRuleGroup(stored.definition);
    const group = result.ok ? result.groups[0] : undefined;
    return group === undefined ? [] : [{ stored, group }];
  });
}

/** Prometheus' ActiveAlerts: the alerts of a rule that are not resolved. */
function activeAlerts(state: RuleGroupState | undefined, key: string): ActiveAlert[] {
  return (state?.rules[key]?.alerts ?? []).filter((alert) => alert.resolvedAtMs === null);
}

/**
 * `/api/v1/rules`' groups as Prometheus 2.42 writes them (web/api/v1/api.go), from the groups
 * as stored and their last evaluations; `file` is the namespace, as in Cortex and Mimir.
 * `type` keeps only alerting (`alert`) or recording (`record`) rules.
 */
export function prometheusRuleGroups(
  groups: readonly EvaluatedRuleGroup[],
  defaultIntervalMs: number,
  type: '' | 'alert' | 'record',
): PrometheusRuleGroup[] {
  return parsed(groups).map(({ stored, group }) => {
    const evaluation = stored.evaluation;
    const state = evaluation?.state as RuleGroupState | undefined;
    const lastEvaluation =
      evaluation === undefined ? goZeroTime : goTime(evaluation.lastEvaluationMs);
    const keys = ruleStateKeys(group.rules);
    const rules = group.rules.flatMap((rule, i): PrometheusRuleGroup['rules'] => {
      const health = evaluation?.health[i];
      const common = {
        health: health?.health ?? ('unknown' as const),
        ...(health?.lastError ? { lastError: health.lastError } : {}),
        // Per rule, only the group's evaluation is measured.
        evaluationTime: 0,
        lastEvaluation,
      };
      if (rule.kind === 'record') {
        if (type === 'alert') return [];
        return [
          {
            name: rule.record,
            query: rule.expr,
            ...(Object.keys(rule.labels).length === 0 ? {} : { labels: { ...rule.labels } }),
            ...common,
            type: 'recording' as const,
          },
        ];
      }
      if (type === 'record') return [];
      const all = state?.rules[keys[i]!]?.alerts ?? [];
      const ruleState = all.reduce<'inactive' | 'pending' | 'firing'>(
        (max, alert) => (stateRank[alert.state] > stateRank[max] ? alert.state : max),
        'inactive',
      );
      return [
        {
          state: ruleState,
          name: rule.alert,
          query: rule.expr,
          duration: rule.forMs / 1000,
          keepFiringFor: rule.keepFiringForMs / 1000,
          labels: { ...rule.labels },
          annotations: { ...rule.annotations },
          alerts: activeAlerts(state, keys[i]!).map(apiAlert),
          ...common,
          type: 'alerting' as const,
        },
      ];
    });
    return {
      name: group.name,
      file: stored.namespace,
      rules,
      interval: (group.intervalMs ?? defaultIntervalMs) / 1000,
      limit: group.limit,
      evaluationTime: (evaluation?.durationMs ?? 0) / 1000,
      lastEvaluation,
    };
  });
}

/** `/api/v1/alerts`: every active (pending or firing) alert of every alerting rule. */
export function prometheusActiveAlerts(groups: readonly EvaluatedRuleGroup[]): PrometheusAlert[] {
  return parsed(groups).flatMap(({ stored, group }) => {
    const state = stored.evaluation?.state as RuleGroupState | undefined;
    const keys = ruleStateKeys(group.rules);
    return group.rules.flatMap((rule, i) =>
      rule.kind === 'alert' ? activeAlerts(state, keys[i]!).map(apiAlert) : [],
    );
  });
}
