export { createDatabase } from './database.js';
export type { Database } from './database.js';

export { isTransientDbError } from './classify-db-error.js';
export { migrate } from './migrate.js';
export { refreshRollups } from './refresh-rollups.js';
export type { RollupChunkSetAside } from './refresh-rollups.js';
export { runMaintenance } from './run-maintenance.js';
export { loadLogResumeOffsets } from './consumer-offsets.js';
export { createDeadLetterStore } from './dead-letter-store.js';
export type { HostSample } from './sample-batch.js';
export { createSampleStore } from './sample-store.js';
export { createOrgStore, defaultOrganizationId } from './org-store.js';
export { hashApiKey } from './api-key.js';
export type { ApiKeyScope } from './api-key.js';
export { createApiKeyStore } from './api-key-store.js';
export { createServiceQueries, servicesPageStatement } from './service-queries.js';
export type {
  ListServicesQuery,
  MetricBucketRow,
  MetricSeriesQuery,
  ServiceDetailRow,
  ServiceQueries,
  ServiceRow,
} from './service-queries.js';

export { fireAlert, resolveAlerts } from './alert-transitions.js';
export { createEvaluatorStore } from './evaluator-store.js';
export type {
  AlertEvent,
  EvaluatorCommit,
  EvaluatorCommitResult,
  EvaluatorStateKey,
  EvaluatorStateRecord,
  EvaluatorStore,
  HostWatermarkRecord,
  StoredHosts,
} from './evaluator-store.js';
export { loadLiveRules, ruleSetFingerprint } from './rule-snapshot.js';
export type { LiveRule, LiveRuleSnapshot } from './rule-snapshot.js';

export { createInvestigationStore } from './investigation-store.js';
export type {
  ClaimOptions,
  ClaimedInvestigation,
  EvidenceSample,
  EvidenceSnapshot,
  FailOptions,
  InvestigationEvidence,
  InvestigationFinding,
  InvestigationRecommendation,
  InvestigationReport,
  InvestigationStore,
  InvestigationTimelineEntry,
} from './investigation-store.js';

export { createRuleStore } from './rule-store.js';
export type { RuleStore } from './rule-store.js';
export { createAlertQueries } from './alert-queries.js';
export type { AlertQueries, ListAlertsQuery } from './alert-queries.js';
export { createInvestigationQueries } from './investigation-queries.js';
export type {
  InvestigationDetailRow,
  InvestigationQueries,
  InvestigationRow,
  ListInvestigationsQuery,
} from './investigation-queries.js';

export { createNotificationChannelStore } from './notification-channel-store.js';
export type {
  ChannelType,
  NotificationChannelRecord,
  NotificationChannelStore,
} from './notification-channel-store.js';
export { abandonedAttemptDetail, createNotificationStore } from './notification-store.js';
export type {
  ClaimedNotification,
  ClaimNotificationsOptions,
  NotificationRecord,
  NotificationStore,
  RecordAttemptInput,
} from './notification-store.js';
