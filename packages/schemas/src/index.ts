export type { Container, IngestPayload, Process } from './ingest.js';
export {
  checkSampleTime,
  containerSchema,
  ingestLimits,
  ingestPath,
  ingestPayloadSchema,
  ingestResponseSchema,
  metricNamePattern,
  processSchema,
} from './ingest.js';
export { readCanonicalIngestBody } from './canonical-ingest.js';
export { parseIngestBody } from './parse-ingest-body.js';
export { isStorableText } from './input-policy.js';
export {
  formatRateLimit,
  formatRateLimitPolicy,
  rateLimitHeaderPatterns,
  rateLimitPolicyName,
  rateLimitWindowSeconds,
} from './rate-limit-headers.js';
export type { SampleMessage } from './sample-message.js';
export { encodeSampleMessage, sampleMessageKey } from './sample-message.js';
export type {
  DecodedSample,
  PositionedSample,
  SampleExemplar,
  SamplePosition,
  SnapshotJson,
} from './decoded-sample.js';
export type { RecordHostSample, SampleRecordDecoder } from './decode-sample-record.js';
export {
  createSharedSampleRecordDecoder,
  decodeHostSample,
  decodeSampleRecord,
} from './decode-sample-record.js';
export { encodeSampleRecord } from './sample-record.js';
export { toHostRecord } from './host-record.js';
export { encodeBinarySampleMessage } from './binary-sample-message.js';
export type {
  AlertCondition,
  AlertReason,
  AlertResponse,
  BodyParseResult,
  AlertSeverity,
  MetricStep,
  Pagination,
  PaginationQuery,
  ProblemResponse,
  QueryInput,
  QueryParseResult,
  ServiceDetailResponse,
  ServiceListResponse,
  ServiceMetricsQuery,
  ServiceMetricsResponse,
  ServiceResponse,
  ServiceStatus,
} from './api.js';
export {
  alertSchema,
  alertSeverities,
  apiLimits,
  conditionHolds,
  healthResponseSchema,
  idPattern,
  paginationQuerySchema,
  parseBody,
  parseQuery,
  parseServiceListQuery,
  parseServiceMetricsQuery,
  problemSchema,
  readinessResponseSchema,
  serviceDetailSchema,
  serviceListQuerySchema,
  serviceListResponseSchema,
  serviceMetricsQuerySchema,
  serviceMetricsResponseSchema,
} from './api.js';
export type {
  AlertRuleCreateRequest,
  AlertRuleListResponse,
  AlertRuleResponse,
  AlertRuleUpdateRequest,
  NoDataState,
} from './alert-rules.js';
export {
  alertRuleCreateSchema,
  alertRuleListResponseSchema,
  alertRuleSchema,
  alertRuleUpdateSchema,
} from './alert-rules.js';
export type { AlertListResponse } from './alerts.js';
export {
  alertAcknowledgeSchema,
  alertListQuerySchema,
  alertListResponseSchema,
  parseAlertListQuery,
} from './alerts.js';
export type {
  Silence,
  SilenceListResponse,
  SilenceMatchers,
  SilenceRecurrence,
  SilenceResponse,
  SilenceState,
} from './silences.js';
export {
  silenceCreateSchema,
  silenceListQuerySchema,
  silenceListResponseSchema,
  silenceSchema,
  toSilenceMatchers,
  toSilenceResponse,
} from './silences.js';
export type {
  InvestigationAnalysis,
  InvestigationDetailResponse,
  InvestigationFinding,
  InvestigationListResponse,
  InvestigationRecommendation,
  InvestigationReport,
  InvestigationResponse,
  InvestigationStatus,
  InvestigationTimelineEvent,
} from './investigations.js';
export {
  investigationCreateDocumentSchema,
  investigationDetailSchema,
  investigationListQuerySchema,
  investigationListResponseSchema,
  parseInvestigationListQuery,
  parseInvestigationRequest,
} from './investigations.js';
export type {
  AlertmanagerTarget,
  EmailTarget,
  NotificationChannelListResponse,
  NotificationChannelResponse,
  NotificationChannelType,
  NotificationListResponse,
  NotificationResponse,
  NotificationTarget,
  NotificationTargets,
  SlackTarget,
  WebhookTarget,
} from './notification-channels.js';
export {
  alertmanagerTargetSchema,
  emailTargetSchema,
  isNotificationChannelType,
  notificationChannelListResponseSchema,
  notificationChannelSchema,
  notificationChannelTypes,
  notificationLimits,
  notificationListResponseSchema,
  notificationTargetSchemas,
  slackTargetSchema,
  webhookTargetSchema,
} from './notification-channels.js';
export type { Alert, AlertNotification, AlertTransition } from './alerts.js';
export { isRuleFileAlert, opensInvestigation, toAlertResponse } from './alerts.js';
export type { AlertRule, AlertRuleDraft, AlertRuleFields, RuleFlapping } from './alert-rules.js';
export {
  alertRuleOptionDefaults,
  recoveryThresholdProblem,
  toAlertRuleResponse,
} from './alert-rules.js';
export { parseMessageTemplate, renderMessageTemplate } from './message-template.js';
export type {
  PrometheusAlert,
  PrometheusError,
  PrometheusErrorType,
  PrometheusRuleGroup,
} from './prometheus-api.js';
export {
  prometheusAlertSchema,
  prometheusApiBasePath,
  prometheusErrorSchema,
  prometheusExemplarsDataSchema,
  prometheusExemplarsQuerySchema,
  prometheusInstantQuerySchema,
  prometheusQueryDataSchema,
  prometheusRangeQuerySchema,
  prometheusRuleGroupSchema,
  prometheusSeriesQuerySchema,
  prometheusSuccessSchema,
} from './prometheus-api.js';
export { maxInternedLength, StringTable } from './string-table.js';
export type { BucketSpan, NativeHistogram, TimedHistogram } from './native-histogram.js';
export { counterResetHints } from './native-histogram.js';
export { decodeHistogramChunk, encodeHistogramChunk } from './histogram-chunk.js';
