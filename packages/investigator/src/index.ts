export { analyzeIncident, defaultPeerTagKeys, statisticalMethod } from './analyze-incident.js';
export type { AnalyzeOptions, IncidentAnalysis, Verdict } from './analyze-incident.js';
export { causeKinds } from './incident-evidence.js';
export type { CauseKind, Hypothesis } from './incident-evidence.js';
export { incidentWindows } from './incident-input.js';
export type {
  AlertFacts,
  HostSnapshot,
  IncidentInput,
  IncidentWindowOptions,
  IncidentWindows,
  MetricSeries,
  PeerAlert,
  PeerService,
  RuleFiring,
  TimeRange,
  TimedValue,
} from './incident-input.js';
export { toIncidentInput } from './evidence-to-input.js';

export { createInvestigator } from './investigator.js';
export type {
  Investigator,
  InvestigatorDeps,
  InvestigatorMetrics,
  InvestigatorOptions,
  RunOutcome,
  RunStatus,
} from './investigator.js';

export type { NarratedReport, Narrator } from './narrator.js';
export { createChatCompletionsNarrator } from './chat-completions-narrator.js';
export type { ChatCompletionsNarratorOptions } from './chat-completions-narrator.js';
export { createInvestigatorMetrics } from './investigator-metrics.js';
