// One folder per capability. `core` (connection, errors, paging) and `schema` (migrations,
// storage settings, partitions) are shared; the others use only those two, apart from
// `alerts` ← rules, investigations, services, evaluator-state (which also writes samples) and
// maintenance ← services (the rollups' value bound).
export { createDatabase } from './core/database.js';
export type { Database } from './core/database.js';

export { isTransientDbError } from './core/classify-db-error.js';
export { migrate } from './schema/migrate.js';
export { refreshRollups } from './maintenance/refresh-rollups.js';
export type { RollupChunkSetAside } from './maintenance/refresh-rollups.js';
export { runMaintenance } from './maintenance/run-maintenance.js';
export { loadLogResumeOffsets } from './log/consumer-offsets.js';
export { createDeadLetterStore } from './log/dead-letter-store.js';
export type { HostSample } from './samples/sample-batch.js';
export { createSampleStore } from './samples/sample-store.js';
export { createOrgStore, defaultOrganizationId } from './orgs/org-store.js';
export { hashApiKey } from './orgs/api-key.js';
export type { ApiKeyScope } from './orgs/api-key.js';
export { createApiKeyStore } from './orgs/api-key-store.js';
export { createServiceQueries, servicesPageStatement } from './services/service-queries.js';
export type {
  ListServicesQuery,
  MetricBucketRow,
  MetricSeriesQuery,
  ServiceDetailRow,
  ServiceQueries,
  ServiceRow,
} from './services/service-queries.js';

export { fireAlert, resolveAlerts } from './alerts/alert-transitions.js';
export { createEvaluatorStore } from './evaluator-state/evaluator-store.js';
export type {
  AlertEvent,
  EvaluatorCommit,
  EvaluatorCommitResult,
  EvaluatorStateKey,
  EvaluatorStateRecord,
  EvaluatorStore,
  HostWatermarkRecord,
  StoredHosts,
} from './evaluator-state/evaluator-store.js';
export { loadLiveRules, ruleSetFingerprint } from './rules/rule-snapshot.js';
export type { LiveRule, LiveRuleSnapshot } from './rules/rule-snapshot.js';

export { createInvestigationStore } from './investigations/investigation-store.js';
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
} from './investigations/investigation-store.js';

export { createRuleStore } from './rules/rule-store.js';
export type { RuleStore } from './rules/rule-store.js';
export { createAlertQueries } from './alerts/alert-queries.js';
export type { AlertQueries, ListAlertsQuery } from './alerts/alert-queries.js';
export { createInvestigationQueries } from './investigations/investigation-queries.js';
export type {
  InvestigationDetailRow,
  InvestigationQueries,
  InvestigationRow,
  ListInvestigationsQuery,
} from './investigations/investigation-queries.js';

export { createNotificationChannelStore } from './notifications/notification-channel-store.js';
export type {
  ChannelType,
  NotificationChannelRecord,
  NotificationChannelStore,
} from './notifications/notification-channel-store.js';
export {
  abandonedAttemptDetail,
  createNotificationStore,
} from './notifications/notification-store.js';
export type {
  ClaimedNotification,
  ClaimNotificationsOptions,
  NotificationRecord,
  NotificationStore,
  RecordAttemptInput,
} from './notifications/notification-store.js';
