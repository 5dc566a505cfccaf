import type { InvestigationReport } from '@monitor/schemas';
import { gatherEvidence } from './gather-evidence.js';
import type { Hypothesis, Verdict } from './incident-evidence.js';
import type { IncidentInput } from './incident-input.js';
import { rankHypotheses } from './rank-hypotheses.js';
import { buildFindings, buildSummary } from './report-findings.js';
import { buildRecommendations } from './report-recommendations.js';
import { buildTimeline } from './report-timeline.js';
import { clamp01, round } from './statistics.js';

// An analysis in three jobs: gather the evidence (gather-evidence.ts), decide (rank the
// hypotheses, here, and name one only above the confidence bar), render the report
// (report-*.ts).

export type AnalyzeOptions = {
  /** Tags whose shared value makes another service a peer (default service, region, environment, env). */
  peerTagKeys?: readonly string[];
  /** Below this confidence the verdict is `inconclusive` (default 0.4). */
  inconclusiveBelow?: number;
};

export type IncidentAnalysis = {
  /** What is stored, in the contract's shapes. */
  report: InvestigationReport;
  verdict: Verdict;
  /** Every hypothesis considered, strongest first. */
  hypotheses: Hypothesis[];
};

export const defaultPeerTagKeys: readonly string[] = ['service', 'region', 'environment', 'env'];
const defaultInconclusiveBelow = 0.4;
/** The method of a purely computed analysis (the narrator may extend it). */
const statisticalMethod = 'statistical';

/**
 * Explains an incident from stored evidence: how the metric deviated, which processes and
 * containers grew, what changed (deploys, restarts), whether peers move too, whether the rule
 * flaps; ranks the hypotheses and names one only when its evidence is strong enough.
 * Deterministic: no I/O, no clock.
 */
export function analyzeIncident(
  input: IncidentInput,
  options: AnalyzeOptions = {},
): IncidentAnalysis {
  const evidence = gatherEvidence(input, options.peerTagKeys ?? defaultPeerTagKeys);
  const hypotheses = rankHypotheses(evidence);
  const [top, second] = hypotheses;
  const confidence =
    top === undefined ? 0 : clamp01(top.score * (1 - 0.5 * ((second?.score ?? 0) / top.score)));
  const named =
    top !== undefined && confidence >= (options.inconclusiveBelow ?? defaultInconclusiveBelow);
  const verdict: Verdict = named
    ? { kind: top.kind, subject: top.subject, confidence: round(confidence) }
    : { kind: 'inconclusive', subject: null, confidence: round(confidence) };
  return {
    report: {
      findings: buildFindings(evidence, hypotheses, verdict),
      analysis: {
        summary: buildSummary(evidence, hypotheses, verdict),
        root_cause: named ? top.statement : 'inconclusive',
        confidence: verdict.confidence,
        method: statisticalMethod,
      },
      timeline: buildTimeline(evidence, hypotheses),
      recommendations: buildRecommendations(evidence, hypotheses, verdict),
    },
    verdict,
    hypotheses,
  };
}
