export { createDatabase } from './database.js';
export type { Database, DatabaseOptions, Queryable, Sql, TransactionSql } from './database.js';

export { classifyDbError, isTransientDbError, sqlState } from './classify-db-error.js';
export type { DbErrorKind } from './classify-db-error.js';

export { migrate } from './migrate.js';
export type { MigrateOptions, MigrateResult } from './migrate.js';
export { migrations } from './migrations.js';
export type { Migration, MigrationContext } from './migrations.js';

export {
  defaultStorageRetention,
  readStorageSettings,
  requireStorageSettings,
  storageModes,
} from './storage-settings.js';
export type { StorageMode, StorageSettings } from './storage-settings.js';

export { ensurePartitions } from './ensure-partitions.js';
export type { EnsurePartitionsOptions, EnsurePartitionsResult } from './ensure-partitions.js';
export { partitionName, partitionedTables } from './partition-plan.js';
export type { PartitionedTable } from './partition-plan.js';
export { refreshRollups, rollupValueBound } from './refresh-rollups.js';
export type {
  RefreshRollupsResult,
  Rollup,
  RollupChunkSetAside,
  RollupWindow,
} from './refresh-rollups.js';
export { pruneAlertHistory, pruneIdleWatermarks } from './prune-alert-history.js';
export type {
  PruneAlertHistoryOptions,
  PruneAlertHistoryResult,
  PruneIdleWatermarksOptions,
} from './prune-alert-history.js';
export { RollupsSetAsideError, runMaintenance } from './run-maintenance.js';
export type { MaintenanceOptions, MaintenanceResult } from './run-maintenance.js';

export { loadLogResumeOffsets } from './consumer-offsets.js';
export { createDeadLetterStore } from './dead-letter-store.js';
export type { DeadLetterRecord, DeadLetterStore } from './dead-letter-store.js';

export { InvalidSampleError } from './sample-batch.js';
export type { HostSample, LogPosition, SampleBatch } from './sample-batch.js';
export { createSampleStore } from './sample-store.js';
export type {
  OffsetOwner,
  SampleStore,
  SampleStoreOptions,
  WriteBatchResult,
} from './sample-store.js';

export { createOrgStore, defaultOrganizationId, defaultOrganizationName } from './org-store.js';
export type { Organization, OrgStore } from './org-store.js';

export {
  apiKeyPrefix,
  apiKeyScopes,
  generateApiKey,
  hashApiKey,
  isApiKeyScope,
  keysEqual,
} from './api-key.js';
export type { ApiKeyScope } from './api-key.js';
export { createApiKeyStore } from './api-key-store.js';
export type { ActiveApiKey, ApiKeyRecord, ApiKeyStore, NewApiKey } from './api-key-store.js';

export {
  createServiceQueries,
  minuteFillMaxMs,
  rawTailMaxMs,
  servicesPageStatement,
} from './service-queries.js';
export type {
  ListServicesQuery,
  MetricBucketRow,
  MetricSeriesQuery,
  ServiceDetailRow,
  ServiceHealth,
  ServiceQueries,
  ServiceQueriesOptions,
  ServiceRow,
} from './service-queries.js';

export { fireAlert, resolveAlerts } from './alert-transitions.js';
export type {
  FireAlertInput,
  FireAlertResult,
  ResolveAlertsFilter,
  StreamPosition,
} from './alert-transitions.js';

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
  EvidencePeer,
  EvidenceRequest,
  EvidenceSample,
  EvidenceService,
  EvidenceSnapshot,
  FailOptions,
  FailOutcome,
  InvestigationAnalysis,
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
  NotificationAttemptRecord,
  NotificationRecord,
  NotificationStatus,
  NotificationStore,
  RecordAttemptInput,
} from './notification-store.js';
