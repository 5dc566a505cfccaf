import type { InvestigationReport } from '@monitor/schemas';

/** The report after a narrator had its turn. */
export type NarratedReport = {
  report: InvestigationReport;
  /** `failed`: the computed text was kept, and analysis.method says why. */
  outcome: 'rewritten' | 'failed';
};

/** Rewrites the wording of a computed report (summary, recommendations); an optional LLM. */
export type Narrator = {
  /**
   * Never throws and never changes numbers, the root cause, findings, evidence or the timeline:
   * on any failure it returns the computed report with the reason in analysis.method.
   */
  narrate(report: InvestigationReport): Promise<NarratedReport>;
};
