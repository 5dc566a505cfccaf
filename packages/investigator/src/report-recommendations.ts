import type { InvestigationRecommendation } from '@monitor/schemas';
import { iso } from './format.js';
import type { Hypothesis, IncidentEvidence, Verdict } from './incident-evidence.js';

// What to do next: the named cause's remedy, or where to look when nothing was named.

export function buildRecommendations(
  evidence: IncidentEvidence,
  hypotheses: Hypothesis[],
  verdict: Verdict,
): InvestigationRecommendation[] {
  const [top, second] = hypotheses;
  const recommendations: InvestigationRecommendation[] = [];
  if (verdict.kind !== 'inconclusive' && top !== undefined) {
    recommendations.push(top.recommendation);
    if (second !== undefined && second.score >= 0.25) {
      recommendations.push({ ...second.recommendation, priority: 'medium' });
    }
    return recommendations;
  }
  const from = iso(evidence.windows.incident.fromMs);
  const to = iso(evidence.windows.incident.toMs);
  if (evidence.observation.basis === 'none') {
    recommendations.push({
      title: `Collect processes and containers from ${evidence.host}`,
      detail:
        `${evidence.host} sent no process or container snapshot and has no baseline, so nothing ` +
        `stored says what uses the resource. Have its agent report processes and docker ` +
        `containers with every sample, and read its logs from ${from} to ${to} meanwhile.`,
      priority: 'high',
    });
    return recommendations;
  }
  recommendations.push({
    title: `Look beyond host metrics on ${evidence.host}`,
    detail:
      `Nothing the agent reports explains the ${evidence.focus.metric} deviation: read the ` +
      `application and kernel logs of ${evidence.host} from ${from} to ${to} (dmesg, journald) ` +
      `and check its dependencies and incoming traffic.`,
    priority: 'high',
  });
  for (const candidate of hypotheses.slice(0, 2)) {
    recommendations.push({ ...candidate.recommendation, priority: 'low' });
  }
  return recommendations;
}
