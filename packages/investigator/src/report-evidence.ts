import type { ConsumerChange } from './consumer-changes.js';
import type { ConsumerLevel } from './current-consumers.js';
import { iso } from './format.js';
import type { IncidentEvidence } from './incident-evidence.js';
import type { TimeRange } from './incident-input.js';
import type { MetricDeviation } from './metric-deviation.js';
import { round } from './statistics.js';

// The evidence objects and phrases the findings and the timeline share: one rendering of a
// deviation, a consumer and a moment, wherever the report shows them.

export function windowOf(range: TimeRange): { from: string; to: string } {
  return { from: iso(range.fromMs), to: iso(range.toMs) };
}

export function deviationEvidence(d: MetricDeviation): Record<string, unknown> {
  return {
    metric: d.metric,
    baseline: {
      ...windowOf(d.baseline),
      mean: round(d.baseline.mean),
      stddev: round(d.baseline.stddev),
      samples: d.baseline.count,
    },
    incident: {
      ...windowOf(d.incident),
      mean: round(d.incident.mean),
      min: round(d.incident.min),
      max: round(d.incident.max),
      last: round(d.incident.last),
      samples: d.incident.count,
    },
    recent_average: round(d.recentLevel),
    z: round(d.z),
    incident_slope_per_minute: round(d.incidentSlopePerMinute),
    onset: d.onsetMs === undefined ? null : iso(d.onsetMs),
  };
}

/**
 * The moment the levels are read at: an alert's firing, or, for an investigation of a service and
 * a time range, the end of that range (no alert fired).
 */
export function atMoment(evidence: IncidentEvidence): string {
  return evidence.alert === undefined ? 'at the end of the range' : 'at firing';
}

export function consumerEvidence(c: ConsumerChange): Record<string, unknown> {
  return {
    [c.kind]: c.name,
    ...(c.kind === 'process' ? { pids: c.pids } : { image: c.image ?? null }),
    baseline: round(c.baseline),
    firing: round(c.firing),
    growth: round(c.growth),
    correlation: round(c.correlation),
    appeared: c.appeared,
    onset: c.onsetMs === undefined ? null : iso(c.onsetMs),
  };
}

export function levelEvidence(c: ConsumerLevel): Record<string, unknown> {
  return {
    [c.kind]: c.name,
    ...(c.kind === 'process' ? { pids: c.pids } : { image: c.image ?? null }),
    firing: round(c.level),
    first: round(c.first),
    share_of_listed: round(c.share),
    correlation: round(c.correlation),
    appeared: c.appeared,
    first_seen: iso(c.firstSeenMs),
  };
}
