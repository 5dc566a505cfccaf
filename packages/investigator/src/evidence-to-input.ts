import type { InvestigationEvidence, EvidenceSample } from '@monitor/db';
import type { Alert, Container, Process } from '@monitor/schemas';
import { containerSchema, processSchema } from '@monitor/schemas';
import type {
  AlertFacts,
  HostSnapshot,
  IncidentInput,
  IncidentWindows,
  MetricSeries,
} from './incident-input.js';

/** Groups samples by metric, each series in time order. */
export function toSeries(samples: readonly EvidenceSample[]): MetricSeries[] {
  const byMetric = new Map<string, MetricSeries>();
  for (const sample of samples) {
    let series = byMetric.get(sample.metric);
    if (series === undefined) {
      series = { metric: sample.metric, points: [] };
      byMetric.set(sample.metric, series);
    }
    series.points.push({ timeMs: sample.time.getTime(), value: sample.value });
  }
  const all = [...byMetric.values()].sort((a, b) => a.metric.localeCompare(b.metric));
  for (const series of all) series.points.sort((a, b) => a.timeMs - b.timeMs);
  return all;
}

/** Items of a stored snapshot that match the ingest shapes; anything else is skipped. */
function parseItems<T>(items: readonly unknown[], parse: (item: unknown) => T | undefined): T[] {
  const parsed: T[] = [];
  for (const item of items) {
    const value = parse(item);
    if (value !== undefined) parsed.push(value);
  }
  return parsed;
}

export function toAlertFacts(alert: Alert): AlertFacts {
  return {
    id: alert.id,
    ruleId: alert.ruleId,
    ruleName: alert.ruleName,
    metric: alert.metric,
    condition: alert.condition,
    threshold: alert.threshold,
    severity: alert.severity,
    // A no-data alert (value null, migration 17) has no sample that fired it.
    value: alert.value,
    reason: alert.reason,
    startedAtMs: alert.startedAt.getTime(),
    firedAtMs: alert.firedAt.getTime(),
  };
}

/** The engine's input from what the store read. */
export function toIncidentInput(
  evidence: InvestigationEvidence,
  windows: IncidentWindows,
): IncidentInput {
  const snapshots: HostSnapshot[] = evidence.snapshots
    .map((snapshot) => ({
      timeMs: snapshot.time.getTime(),
      containers: parseItems<Container>(
        snapshot.containers,
        (item) => containerSchema.safeParse(item).data,
      ),
      processes: parseItems<Process>(
        snapshot.processes,
        (item) => processSchema.safeParse(item).data,
      ),
    }))
    .sort((a, b) => a.timeMs - b.timeMs);
  return {
    service: evidence.service,
    ...(evidence.alert === undefined ? {} : { alert: toAlertFacts(evidence.alert) }),
    windows,
    series: toSeries(evidence.samples),
    snapshots,
    peers: evidence.peers.map((peer) => ({
      id: peer.service.id,
      name: peer.service.name,
      tags: peer.service.tags,
      series: toSeries(peer.samples),
      alerts: peer.alerts.map((a) => ({
        ruleName: a.ruleName,
        metric: a.metric,
        severity: a.severity,
        firedAtMs: a.firedAt.getTime(),
        resolvedAtMs: a.resolvedAt?.getTime() ?? null,
      })),
    })),
    ruleHistory: evidence.ruleHistory.map((a) => ({
      alertId: a.id,
      firedAtMs: a.firedAt.getTime(),
      resolvedAtMs: a.resolvedAt?.getTime() ?? null,
    })),
  };
}
