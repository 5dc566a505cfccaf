import type { InvestigationTimelineEvent } from '@monitor/schemas';
import { clockTime, formatResource, iso, resourceWord } from './format.js';
import type { Hypothesis, IncidentEvidence } from './incident-evidence.js';
import { atMoment, consumerEvidence, levelEvidence } from './report-evidence.js';
import { round } from './statistics.js';

// The report's timeline: every dated event the evidence holds, in order.

/** Event kinds in the order they are listed when they share a timestamp. */
const timelineOrder = [
  'container_started',
  'host_first_seen',
  'rule_fired_before',
  'container_image_changed',
  'container_appeared',
  'container_disappeared',
  'container_status_changed',
  'container_restarted',
  'process_started',
  'consumer_growth_began',
  'metric_deviation_began',
  'metric_moved',
  'peer_alert_fired',
  'alert_started',
  'alert_fired',
];

export function buildTimeline(
  evidence: IncidentEvidence,
  hypotheses: Hypothesis[],
): InvestigationTimelineEvent[] {
  const entries: (InvestigationTimelineEvent & { atMs: number })[] = [];
  const add = (atMs: number, type: string, description: string, data: Record<string, unknown>) =>
    entries.push({ atMs, at: iso(atMs), type, description, data });
  const { windows, alert, focus } = evidence;
  for (const firing of evidence.history?.priorFirings.slice(-10) ?? []) {
    add(
      firing.firedAtMs,
      'rule_fired_before',
      `Rule ${evidence.history?.ruleName ?? ''} fired earlier`,
      {
        alert_id: firing.alertId,
        resolved_at: firing.resolvedAtMs === null ? null : iso(firing.resolvedAtMs),
      },
    );
  }
  for (const event of evidence.containerEvents) {
    if (event.atMs < windows.incident.fromMs - 30 * 60_000) continue;
    const what =
      event.type === 'container_image_changed'
        ? `Container ${event.container} image ${event.previousImage ?? '?'} → ${event.image ?? '?'}`
        : `Container ${event.container} ${event.type.replace('container_', '').replace('_', ' ')}${event.status === undefined ? '' : ` (${event.status})`}`;
    add(event.atMs, event.type, what, {
      container: event.container,
      image: event.image ?? null,
      ...(event.previousImage === undefined ? {} : { previous_image: event.previousImage }),
      ...(event.status === undefined ? {} : { status: event.status }),
      ...(event.previousStatus === undefined ? {} : { previous_status: event.previousStatus }),
    });
  }
  const named = new Set(hypotheses.slice(0, 3).map((h) => `${h.kind}:${h.subject}`));
  const notable = evidence.consumers.filter(
    (c) =>
      c.onsetMs !== undefined &&
      c.relativeGrowth >= 0.2 &&
      (named.has(`${c.kind}:${c.name}`) || c.appeared),
  );
  for (const c of notable) {
    const onset = c.onsetMs as number;
    add(
      onset,
      c.appeared ? 'process_started' : 'consumer_growth_began',
      `${c.kind} ${c.name} ${c.appeared ? 'appeared' : 'began to grow'}: ${resourceWord(c.resource)} ${formatResource(c.resource, c.baseline)} → ${formatResource(c.resource, c.firing)}`,
      consumerEvidence(c),
    );
  }
  if (evidence.observation.basis !== 'baseline' && evidence.observation.firstSeenMs !== undefined) {
    add(
      evidence.observation.firstSeenMs,
      'host_first_seen',
      `${evidence.host} first seen (no earlier sample in the windows read)`,
      {
        baseline_points: evidence.observation.baselinePoints,
        snapshots: evidence.observation.snapshots,
      },
    );
  }
  for (const start of evidence.recentStarts) {
    add(
      start.startedAtMs,
      'container_started',
      `Container ${start.container} started (about: '${start.status}' at ${clockTime(start.seenAtMs)})`,
      { container: start.container, image: start.image ?? null, status: start.status },
    );
  }
  for (const c of evidence.current) {
    if (!c.appeared || !named.has(`${c.kind}:${c.name}`)) continue;
    add(
      c.firstSeenMs,
      'process_started',
      `${c.kind} ${c.name} appeared: ${resourceWord(c.resource)} ${formatResource(c.resource, c.level)} ${atMoment(evidence)}`,
      levelEvidence(c),
    );
  }
  if (evidence.observation.basis === 'baseline' && focus.deviation?.onsetMs !== undefined) {
    add(
      focus.deviation.onsetMs,
      'metric_deviation_began',
      `${focus.metric} left its baseline range`,
      {
        metric: focus.metric,
        baseline_mean: round(focus.deviation.baseline.mean),
        baseline_stddev: round(focus.deviation.baseline.stddev),
      },
    );
  }
  for (const moved of evidence.movedMetrics) {
    if (moved.onsetMs === undefined) continue;
    add(moved.onsetMs, 'metric_moved', `${moved.metric} left its baseline range`, {
      metric: moved.metric,
      baseline_mean: round(moved.baseline.mean),
      recent_average: round(moved.recentLevel),
      z: round(moved.z),
    });
  }
  const seen = new Set<string>();
  for (const group of evidence.peerGroups) {
    for (const member of group.members) {
      for (const peerAlert of member.alerts) {
        const key = `${member.id}:${peerAlert.firedAtMs}:${peerAlert.ruleName}`;
        if (seen.has(key)) continue;
        seen.add(key);
        add(
          peerAlert.firedAtMs,
          'peer_alert_fired',
          `${member.name}: ${peerAlert.ruleName} fired`,
          {
            service: member.name,
            rule: peerAlert.ruleName,
            metric: peerAlert.metric,
            severity: peerAlert.severity,
          },
        );
      }
    }
  }
  if (alert !== undefined) {
    const noData = alert.reason === 'no_data';
    add(
      alert.startedAtMs,
      'alert_started',
      noData
        ? `${alert.metric} stopped arriving (no-data rule)`
        : alert.condition === null
          ? `${alert.ruleName} started to hold (pending)`
          : `${alert.metric} breached ${alert.threshold} (${alert.condition})`,
      {
        rule: alert.ruleName,
        threshold: alert.threshold,
        ...(noData ? { reason: 'no_data' } : {}),
      },
    );
    add(
      alert.firedAtMs,
      'alert_fired',
      alert.value === null
        ? `${alert.ruleName} fired: no data`
        : `${alert.ruleName} fired at ${round(alert.value)}`,
      { alert_id: alert.id, value: alert.value, severity: alert.severity },
    );
  }
  return entries
    .sort(
      (a, b) => a.atMs - b.atMs || timelineOrder.indexOf(a.type) - timelineOrder.indexOf(b.type),
    )
    .map(({ atMs: _atMs, ...entry }) => entry);
}
