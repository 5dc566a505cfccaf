import type { EvidenceSample, EvidenceSnapshot, InvestigationEvidence } from '@monitor/db';
import type { Alert, IngestPayload } from '@monitor/schemas';
import { defaultPeerTagKeys } from '../analyze-incident.js';
import { toIncidentInput } from '../evidence-to-input.js';
import type { IncidentInput, IncidentWindowOptions, IncidentWindows } from '../incident-input.js';
import { incidentWindows } from '../incident-input.js';
import type { Scenario } from './scenario.js';
import type { SimulatedFiring } from './simulate-rule.js';
import { simulateRule } from './simulate-rule.js';

/** A scenario's incident as the engine sees it, built in memory from its payloads. */
export type ScenarioIncident = {
  /** The rule's last firing on the scenario's host: the alert investigated. */
  firing: SimulatedFiring;
  windows: IncidentWindows;
  evidence: InvestigationEvidence;
  input: IncidentInput;
};

type HostData = {
  tags: Record<string, string>;
  samples: EvidenceSample[];
  snapshots: EvidenceSnapshot[];
};

function byHost(payloads: readonly IngestPayload[]): Map<string, HostData> {
  const hosts = new Map<string, HostData>();
  for (const payload of payloads) {
    const time = new Date(payload.timestamp ?? 0);
    let data = hosts.get(payload.host);
    if (data === undefined) {
      data = { tags: {}, samples: [], snapshots: [] };
      hosts.set(payload.host, data);
    }
    data.tags = payload.tags ?? {};
    for (const [metric, value] of Object.entries(payload.metrics)) {
      data.samples.push({ time, metric, value });
    }
    const containers = payload.docker_containers ?? [];
    const processes = payload.processes ?? [];
    if (containers.length > 0 || processes.length > 0) {
      data.snapshots.push({ time, containers, processes });
    }
  }
  return hosts;
}

function alertRow(scenario: Scenario, host: string, firing: SimulatedFiring, n: number): Alert {
  return {
    id: `alr_${host}_${n}`,
    ruleId: `rul_${scenario.name}`,
    ruleName: scenario.rule.name,
    serviceId: host,
    host,
    metric: scenario.rule.metric,
    condition: scenario.rule.condition,
    threshold: scenario.rule.threshold,
    severity: scenario.rule.severity,
    status: firing.resolvedAtMs === null ? 'active' : 'resolved',
    value: firing.value,
    startedAt: new Date(firing.startedAtMs),
    firedAt: new Date(firing.firedAtMs),
    resolvedAt: firing.resolvedAtMs === null ? null : new Date(firing.resolvedAtMs),
    investigationId: null,
    reason: 'threshold',
    acknowledgedAt: null,
    acknowledgedBy: null,
    acknowledgementComment: null,
    silenced: false,
    flapping: false,
    labels: {},
    annotations: {},
  };
}

const within = (time: Date, fromMs: number, toMs: number) =>
  time.getTime() >= fromMs && time.getTime() <= toMs;

/**
 * What the store would read for the scenario's incident after the pipeline stored its payloads
 * and the evaluator fired its rule (every host's firings simulated), mapped to the engine's input
 * by the same function the worker uses. Host names stand in for service ids.
 */
export function scenarioIncident(
  scenario: Scenario,
  options: IncidentWindowOptions & { peerTagKeys?: readonly string[] } = {},
): ScenarioIncident {
  const hosts = byHost(scenario.payloads);
  const alertsOf = (host: string): Alert[] => {
    const points = (hosts.get(host)?.samples ?? [])
      .filter((s) => s.metric === scenario.rule.metric)
      .map((s) => ({ timeMs: s.time.getTime(), value: s.value }));
    return simulateRule(scenario.rule, points).map((firing, n) =>
      alertRow(scenario, host, firing, n),
    );
  };
  const own = hosts.get(scenario.host);
  const alerts = alertsOf(scenario.host);
  const alert = alerts[alerts.length - 1];
  if (own === undefined || alert === undefined) {
    throw new Error(
      `scenario ${scenario.name}: rule ${scenario.rule.name} never fires on ${scenario.host}`,
    );
  }
  const windows = incidentWindows(alert.startedAt.getTime(), alert.firedAt.getTime(), options);
  const fromMs = windows.baseline.fromMs;
  const toMs = windows.incident.toMs;
  const peerTagKeys = options.peerTagKeys ?? defaultPeerTagKeys;
  const peers = [...hosts]
    .filter(
      ([name, data]) =>
        name !== scenario.host &&
        peerTagKeys.some((key) => own.tags[key] !== undefined && data.tags[key] === own.tags[key]),
    )
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([name, data]) => ({
      service: { id: name, name, tags: data.tags },
      samples: data.samples.filter(
        (s) => s.metric === scenario.rule.metric && within(s.time, fromMs, toMs),
      ),
      alerts: alertsOf(name).filter(
        (a) =>
          a.firedAt.getTime() <= toMs &&
          (a.resolvedAt === null || a.resolvedAt.getTime() >= fromMs),
      ),
    }));
  const evidence: InvestigationEvidence = {
    service: { id: scenario.host, name: scenario.host, tags: own.tags },
    alert,
    samples: own.samples.filter((s) => within(s.time, fromMs, toMs)),
    snapshots: own.snapshots.filter((s) => within(s.time, fromMs, toMs)),
    ruleHistory: alerts.filter((a) => within(a.firedAt, windows.history.fromMs, toMs)),
    peers,
  };
  const firing = {
    startedAtMs: alert.startedAt.getTime(),
    firedAtMs: alert.firedAt.getTime(),
    resolvedAtMs: alert.resolvedAt?.getTime() ?? null,
    // Scenario alerts are threshold alerts (alertRow): never null here.
    value: alert.value ?? scenario.rule.threshold,
  };
  return { firing, windows, evidence, input: toIncidentInput(evidence, windows) };
}
