/**
 * The wire formats the console reads: the API's own response types from @monitor/schemas,
 * imported as types only, so that the browser bundle carries no zod and no Node code. The few
 * value lists the console renders (filters, form options) are kept here, checked against those
 * types so that a value the API adds or drops fails the typecheck.
 */
import type {
  AlertCondition,
  AlertResponse,
  AlertRuleResponse,
  AlertSeverity,
  InvestigationDetailResponse,
  InvestigationResponse,
  MetricStep,
  NoDataState,
  NotificationChannelType,
  Pagination,
  ProblemResponse,
  ServiceDetailResponse,
  ServiceMetricsResponse,
  ServiceResponse,
  ServiceStatus,
  SilenceResponse,
} from '@monitor/schemas';

export type {
  MetricStep,
  Pagination,
  ServiceStatus,
  AlertResponse as Alert,
  AlertCondition as Condition,
  AlertSeverity as Severity,
  AlertRuleResponse as Rule,
  InvestigationResponse as Investigation,
  InvestigationDetailResponse as InvestigationDetail,
  NotificationChannelType as Channel,
  ServiceResponse as Service,
  ServiceDetailResponse as ServiceDetail,
  ServiceMetricsResponse as MetricSeries,
  SilenceResponse as Silence,
};

/**
 * An error answer as the console may receive it: the API's problem+json, or only part of one
 * from a proxy in front of it (a gateway's 502, a body that is not JSON).
 */
export type Problem = Partial<ProblemResponse>;

/** Every member of T, once: a list that misses one or names another fails the typecheck. */
type Exhaustive<T extends string, L extends readonly T[]> = [T] extends [L[number]] ? L : never;

function valuesOf<T extends string>() {
  return <const L extends readonly T[]>(values: Exhaustive<T, L>): L => values;
}

/** In the order the services page lists its status filter: worst first. */
export const serviceStatuses = valuesOf<ServiceStatus>()([
  'critical',
  'warning',
  'stale',
  'healthy',
]);

export const severities = valuesOf<AlertSeverity>()(['critical', 'warning', 'info']);

export const conditions = valuesOf<AlertCondition>()([
  'greater_than',
  'greater_than_or_equal',
  'less_than',
  'less_than_or_equal',
  'equal',
  'not_equal',
]);

export const channels = valuesOf<NotificationChannelType>()([
  'slack',
  'email',
  'webhook',
  'alertmanager',
]);

export const noDataStates = valuesOf<NoDataState>()(['alerting', 'ok', 'keep']);
