// One folder per capability. `core` (connection, errors, paging) and `schema` (migrations,
// storage settings, partitions) serve all; beyond them `alerts` serves rules, investigations,
// services and evaluator-state, `samples` serves evaluator-state, and `maintenance` services.
//
// Every store and function exported here raises typed errors (`DatabaseUnavailableError`:
// retriable; `DatabaseRefusedError`: permanent), never the driver's: callers test the type, or
// AppError's `retriable`, instead of classifying PostgreSQL errors themselves.
import { translatingDbErrors, translatingStoreFactory } from './core/database-errors.js';
import { createAlertQueries as alertQueries } from './alerts/alert-queries.js';
import { createSilenceStore as silenceStore } from './silences/silence-store.js';
import {
  fireAlert as fireAlertRaw,
  resolveAlerts as resolveAlertsRaw,
} from './alerts/alert-transitions.js';
import { createEvaluatorStore as evaluatorStore } from './evaluator-state/evaluator-store.js';
import { createExemplarReader as exemplarReader } from './exemplars/exemplar-reader.js';
import { createInvestigationQueries as investigationQueries } from './investigations/investigation-queries.js';
import { createInvestigationStore as investigationStore } from './investigations/investigation-store.js';
import { loadLogResumeOffsets as loadLogResumeOffsetsRaw } from './log/consumer-offsets.js';
import { createDeadLetterStore as deadLetterStore } from './log/dead-letter-store.js';
import {
  refreshRollups as refreshRollupsRaw,
  runMaintenance as runMaintenanceRaw,
} from './maintenance/run-maintenance.js';
import { createNotificationChannelStore as notificationChannelStore } from './notifications/notification-channel-store.js';
import { createNotificationStore as notificationStore } from './notifications/notification-store.js';
import { createAlertmanagerResendStore as alertmanagerResendStore } from './notifications/alertmanager-resends.js';
import { createApiKeyStore as apiKeyStore } from './orgs/api-key-store.js';
import { createOrgStore as orgStore } from './orgs/org-store.js';
import {
  loadLiveRules as loadLiveRulesRaw,
  ruleSetFingerprint as ruleSetFingerprintRaw,
} from './rules/rule-snapshot.js';
import { createRuleStore as ruleStore } from './rules/rule-store.js';
import { createRuleGroupStore as ruleGroupStore } from './rule-groups/rule-group-store.js';
import { createRuleGroupStateStore as ruleGroupStateStore } from './rule-groups/rule-group-state-store.js';
import { readSampleTimeColumn as readSampleTimeColumnRaw } from './samples/copy-binary.js';
import { createSampleStore as sampleStore } from './samples/sample-store.js';
import { readLateSampleWrites as readLateSampleWritesRaw } from './samples/late-sample-writes.js';
import { migrateBefore as migrateBeforeRaw, migrate as migrateRaw } from './schema/migrate.js';
import { convertToTimescale as convertToTimescaleRaw } from './storage/convert-to-timescale.js';
import { readStorageInfo as readStorageInfoRaw } from './schema/storage-settings.js';
import { createServiceQueries as serviceQueries } from './services/service-queries.js';
import { createShardedServiceQueries as shardedServiceQueries } from './services/sharded-service-queries.js';
import {
  assignPartitions as assignPartitionsRaw,
  readPartitionShards as readPartitionShardsRaw,
  storedPartitionOffsets as storedPartitionOffsetsRaw,
} from './shards/partition-shards.js';
import {
  copyShardServices as copyShardServicesRaw,
  dropShardServices as dropShardServicesRaw,
  fenceMovedPartition as fenceMovedPartitionRaw,
  listShardServices as listShardServicesRaw,
  showMovedServices as showMovedServicesRaw,
} from './shards/partition-copy.js';
import {
  beginPartitionMove as beginPartitionMoveRaw,
  finishPartitionMove as finishPartitionMoveRaw,
  markMoveReached as markMoveReachedRaw,
  readPartitionMove as readPartitionMoveRaw,
} from './shards/partition-moves.js';

export { createDatabase } from './core/database.js';
export type { Database } from './core/database.js';
export { DatabaseRefusedError, DatabaseUnavailableError } from './core/database-errors.js';

export const migrate = translatingDbErrors(migrateRaw);
export const migrateBefore = translatingDbErrors(migrateBeforeRaw);
export const refreshRollups = translatingDbErrors(refreshRollupsRaw);
export type { RollupChunkSetAside } from './storage/rollups.js';
export const convertToTimescale = translatingDbErrors(convertToTimescaleRaw);
export type { MigrateOptions, MigrateResult } from './schema/migrate.js';
export { defaultStoragePolicies } from './schema/storage-settings.js';
export {
  compressedChunkMs,
  headChunkMs,
  headCompressLagMs,
  mergedSpanAtMostMs,
} from './storage/timescale/head-chunks.js';
export const readStorageInfo = translatingDbErrors(readStorageInfoRaw);
export const runMaintenance = translatingDbErrors(runMaintenanceRaw);
export const loadLogResumeOffsets = translatingDbErrors(loadLogResumeOffsetsRaw);
export const createDeadLetterStore = translatingStoreFactory(deadLetterStore);
export type { HostSample } from './samples/sample-batch.js';
export const createSampleStore = translatingStoreFactory(sampleStore);
/** Late writes of samples, as the query cache reads them. */
export const readLateSampleWrites = translatingDbErrors(readLateSampleWritesRaw);
/** The rows the sample store COPYs into `samples`, for the benchmark's raw COPY ceiling. */
export { binarySampleChunks } from './samples/copy-binary.js';
export const readSampleTimeColumn = translatingDbErrors(readSampleTimeColumnRaw);
export { scaleValues } from './samples/sample-rows.js';
export { createSeriesScales } from './samples/series-scales.js';
/** The exemplars of series chosen by PromQL selectors, for `query_exemplars`. */
export const createExemplarReader = translatingStoreFactory(exemplarReader);
export { createShardedExemplarReader } from './exemplars/sharded-exemplar-reader.js';
export type { ExemplarReader, ExemplarsRead } from './exemplars/exemplar-reader.js';
export type { SeriesExemplars } from './exemplars/group-exemplars.js';
export { compactHistogramChunks, readHistograms } from './histograms/histogram-chunks.js';
export const createOrgStore = translatingStoreFactory(orgStore);
export { defaultOrganizationId } from './orgs/org-store.js';
export { hashApiKey } from './orgs/api-key.js';
export type { ApiKeyScope } from './orgs/api-key.js';
export const createApiKeyStore = translatingStoreFactory(apiKeyStore);
export const createServiceQueries = translatingStoreFactory(serviceQueries);
export type {
  ListServicesQuery,
  MetricBucketRow,
  MetricSeriesQuery,
  ServiceDetailRow,
  ServiceQueries,
  ServiceRow,
} from './services/service-queries.js';

export const fireAlert = translatingDbErrors(fireAlertRaw);
export const resolveAlerts = translatingDbErrors(resolveAlertsRaw);
export const createEvaluatorStore = translatingStoreFactory(evaluatorStore);
export type {
  AlertEvent,
  EvaluatorCommit,
  EvaluatorCommitResult,
  EvaluatorStateKey,
  EvaluatorStateRecord,
  EvaluatorStore,
  HostWatermarkRecord,
  NoDataSweepResult,
  SeenMetric,
  StoredHosts,
} from './evaluator-state/evaluator-store.js';
export const loadLiveRules = translatingDbErrors(loadLiveRulesRaw);
export const ruleSetFingerprint = translatingDbErrors(ruleSetFingerprintRaw);
export type { LiveRule, LiveRuleSnapshot } from './rules/rule-snapshot.js';

export const createInvestigationStore = translatingStoreFactory(investigationStore);
export type {
  ClaimOptions,
  ClaimedInvestigation,
  EvidenceSample,
  EvidenceSnapshot,
  FailOptions,
  InvestigationEvidence,
  InvestigationStore,
} from './investigations/investigation-store.js';

export const createRuleStore = translatingStoreFactory(ruleStore);
export type { RuleStore } from './rules/rule-store.js';
export const createRuleGroupStore = translatingStoreFactory(ruleGroupStore);
export type { RuleGroupStore, StoredRuleGroup } from './rule-groups/rule-group-store.js';
export const createRuleGroupStateStore = translatingStoreFactory(ruleGroupStateStore);
export type {
  EvaluatedRuleGroup,
  RuleGroupEvaluationRecord,
  RuleGroupForEvaluation,
  RuleGroupStateStore,
  ScheduledRuleGroup,
} from './rule-groups/rule-group-state-store.js';
export type { RuleGroupKey } from './rule-groups/rule-group-key.js';
export type {
  RuleAlertFiring,
  RuleGroupAlertChanges,
  RuleGroupAlertRow,
} from './rule-groups/rule-group-alerts.js';
export const createAlertQueries = translatingStoreFactory(alertQueries);
export type { AlertQueries, ListAlertsQuery } from './alerts/alert-queries.js';
export const createSilenceStore = translatingStoreFactory(silenceStore);
export type { SilenceStore } from './silences/silence-store.js';
export { recurrenceProblem, silenceStateAt } from './silences/silence-schedule.js';
export const createInvestigationQueries = translatingStoreFactory(investigationQueries);
export type {
  InvestigationDetailRow,
  InvestigationQueries,
  InvestigationRow,
  ListInvestigationsQuery,
} from './investigations/investigation-queries.js';

export const createNotificationChannelStore = translatingStoreFactory(notificationChannelStore);
export type {
  ChannelType,
  NotificationChannelRecord,
  NotificationChannelStore,
} from './notifications/notification-channel-store.js';
export const createNotificationStore = translatingStoreFactory(notificationStore);
export const createAlertmanagerResendStore = translatingStoreFactory(alertmanagerResendStore);
export type {
  AlertmanagerResend,
  AlertmanagerResendStore,
  RuleAlertResend,
} from './notifications/alertmanager-resends.js';
export { abandonedAttemptDetail } from './notifications/notification-store.js';
export type {
  ClaimedNotification,
  ClaimNotificationsOptions,
  NotificationRecord,
  NotificationStore,
  RecordAttemptInput,
} from './notifications/notification-store.js';
export const readPartitionShards = translatingDbErrors(readPartitionShardsRaw);
export const assignPartitions = translatingDbErrors(assignPartitionsRaw);
export const storedPartitionOffsets = translatingDbErrors(storedPartitionOffsetsRaw);
export type { PartitionShard } from './shards/partition-shards.js';
export const listShardServices = translatingDbErrors(listShardServicesRaw);
export const copyShardServices = translatingDbErrors(copyShardServicesRaw);
export const fenceMovedPartition = translatingDbErrors(fenceMovedPartitionRaw);
export const showMovedServices = translatingDbErrors(showMovedServicesRaw);
export const dropShardServices = translatingDbErrors(dropShardServicesRaw);
export const beginPartitionMove = translatingDbErrors(beginPartitionMoveRaw);
export const readPartitionMove = translatingDbErrors(readPartitionMoveRaw);
export const markMoveReached = translatingDbErrors(markMoveReachedRaw);
export const finishPartitionMove = translatingDbErrors(finishPartitionMoveRaw);
export type { PartitionMove } from './shards/partition-moves.js';
export { PartitionMovedError } from './samples/sample-offsets.js';
export const createShardedServiceQueries = translatingStoreFactory(shardedServiceQueries);
export { createServiceIdentities } from './shards/service-identities.js';
export type { ServiceIdentities } from './shards/service-identities.js';
