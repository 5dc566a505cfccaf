/**
 * The Prometheus rule groups of `bench:alerts -- --scenario prometheus-rules`, over a fleet of
 * node-exporter-like hosts (`prometheus-fleet.ts`): rules of one service per group (the way
 * teams own rule files), a few groups over the whole fleet, and one probe rule.
 */

/** Alerting rules over the fleet that its values (load 0–4, percentages 0–100) never breach. */
const fleetRuleTemplates: ((scope: string) => { expr: string; for?: string })[] = [
  (s) => ({ expr: `node_load1${s} > 1000` }),
  (s) => ({ expr: `avg by (service) (node_memory_used_percent${s}) > 200`, for: '5m' }),
  (s) => ({ expr: `max_over_time(node_filesystem_used_percent${s}[5m]) > 200` }),
  (s) => ({ expr: `node_memory_used_percent${s} > 150 and node_load1${s} > 150` }),
  (s) => ({ expr: `count by (service) (node_load1${s} > 50) > 0` }),
  (s) => ({ expr: `avg_over_time(node_load1${s}[5m]) > 1000`, for: '10m' }),
  (s) => ({ expr: `node_filesystem_used_percent${s} / 100 > 5` }),
  (s) => ({ expr: `quantile by (service) (0.99, node_load1${s}) > 1000` }),
  (s) => ({ expr: `topk(1, node_memory_used_percent${s}) > 500` }),
  (s) => ({ expr: `min by (service) (node_filesystem_used_percent${s}) < -1`, for: '1m' }),
];

/** The probe rule: `probe_value` above this fires, one alert per probe host. */
export const probeBreachValue = 100;
export const probeClearValue = 0;
export const probeAlertName = 'ProbeHot';

export type PrometheusRulePlanOptions = {
  /** Alerting rules in all, the probe rule included. */
  rules: number;
  /** How many of them range over the whole fleet (in groups of their own). */
  fleetWideRules: number;
  /** The fleet's services (`service` label); the other rules are spread over them. */
  services: number;
  /** The most rules of a fleet-wide group. */
  rulesPerFleetWideGroup: number;
  intervalSeconds: number;
};

export type PlannedGroup = { name: string; rules: number; yaml: string };

function groupYaml(
  name: string,
  intervalSeconds: number,
  rules: { alert: string; expr: string; for?: string }[],
): string {
  const lines = [`name: ${name}`, `interval: ${intervalSeconds}s`, 'rules:'];
  for (const rule of rules) {
    lines.push(`  - alert: ${rule.alert}`, `    expr: '${rule.expr}'`);
    if (rule.for !== undefined) lines.push(`    for: ${rule.for}`);
    lines.push('    labels:', '      severity: warning');
  }
  return `${lines.join('\n')}\n`;
}

/**
 * The groups, each as the YAML the ruler API takes: `fleetWideRules` over every host, the rest
 * but one spread over the services (one group each, templates in turn), and the probe group.
 */
export function planPrometheusRuleGroups(options: PrometheusRulePlanOptions): PlannedGroup[] {
  const { intervalSeconds } = options;
  const groups: PlannedGroup[] = [];
  const fleetWide = Array.from({ length: options.fleetWideRules }, (_, i) => ({
    alert: `FleetWide${i}`,
    ...fleetRuleTemplates[i % fleetRuleTemplates.length]!(''),
  }));
  for (let start = 0; start < fleetWide.length; start += options.rulesPerFleetWideGroup) {
    const rules = fleetWide.slice(start, start + options.rulesPerFleetWideGroup);
    const name = `fleet-${groups.length}`;
    groups.push({ name, rules: rules.length, yaml: groupYaml(name, intervalSeconds, rules) });
  }
  const perService = Array.from({ length: options.services }, () => 0);
  const serviceRules = options.rules - options.fleetWideRules - 1;
  for (let i = 0; i < serviceRules; i++) perService[i % options.services]! += 1;
  perService.forEach((count, service) => {
    if (count === 0) return;
    const scope = `{service="svc-${service}"}`;
    const rules = Array.from({ length: count }, (_, i) => ({
      alert: `Service${service}Rule${i}`,
      ...fleetRuleTemplates[i % fleetRuleTemplates.length]!(scope),
    }));
    const name = `svc-${service}`;
    groups.push({ name, rules: count, yaml: groupYaml(name, intervalSeconds, rules) });
  });
  groups.push({
    name: 'probes',
    rules: 1,
    yaml: groupYaml('probes', intervalSeconds, [
      { alert: probeAlertName, expr: `probe_value > ${(probeBreachValue + probeClearValue) / 2}` },
    ]),
  });
  return groups;
}
