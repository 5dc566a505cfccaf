/**
 * The wire formats the console reads, as the API names them (docs/api.md). Written here
 * rather than imported from @monitor/schemas so the browser bundle carries no zod and no Node
 * code; the integration test runs the console against the real API, which keeps them honest.
 */

export type ServiceStatus = 'healthy' | 'warning' | 'critical' | 'stale';
export const serviceStatuses: readonly ServiceStatus[] = [
  'critical',
  'warning',
  'stale',
  'healthy',
];

export type Pagination = { limit: number; offset: number; total: number; has_more: boolean };

export type Service = {
  id: string;
  name: string;
  status: ServiceStatus;
  last_seen: string;
  metrics: Record<string, number>;
  tags: Record<string, string>;
};

type Container = {
  name: string;
  image?: string;
  status?: string;
  cpu_percent?: number;
  memory_usage?: number;
};

type Process = { name: string; pid: number; cpu_percent?: number; memory_rss?: number };

export type ServiceDetail = Service & {
  snapshot_at: string | null;
  docker_containers: Container[];
  processes: Process[];
  active_alerts: Alert[];
};

export type MetricStep = '1m' | '1h';

type MetricPoint = { time: string; avg: number; min: number; max: number; count: number };

export type MetricSeries = { metric: string; step: MetricStep; points: MetricPoint[] };

export type Severity = 'critical' | 'warning' | 'info';
export const severities: readonly Severity[] = ['critical', 'warning', 'info'];

export type Alert = {
  id: string;
  rule_id: string;
  rule_name: string;
  service_id: string;
  host: string;
  metric: string;
  condition: string;
  threshold: number;
  severity: Severity;
  status: 'active' | 'resolved';
  value: number | null;
  started_at: string;
  fired_at: string;
  resolved_at: string | null;
  investigation_id: string | null;
  reason?: 'threshold' | 'no_data';
  acknowledged_at?: string | null;
  acknowledged_by?: string | null;
  acknowledgement_comment?: string | null;
  silenced?: boolean;
  flapping?: boolean;
};

export const conditions = [
  'greater_than',
  'greater_than_or_equal',
  'less_than',
  'less_than_or_equal',
  'equal',
  'not_equal',
] as const;
export type Condition = (typeof conditions)[number];

export const channels = ['slack', 'email', 'webhook', 'alertmanager'] as const;
export type Channel = (typeof channels)[number];

export const noDataStates = ['alerting', 'ok', 'keep'] as const;

export type Rule = {
  id: string;
  name: string;
  metric: string;
  condition: Condition;
  threshold: number;
  duration_minutes: number;
  severity: Severity;
  channels: Channel[];
  scope: Record<string, string>;
  enabled: boolean;
  created_at: string;
  updated_at: string;
  recovery_threshold?: number | null;
  keep_firing_for_minutes?: number;
  no_data_minutes?: number | null;
  no_data_state?: (typeof noDataStates)[number];
  renotify_minutes?: number | null;
  message_template?: string | null;
  flapping?: { window_minutes: number; max_transitions: number } | null;
};

type Finding = { title: string; detail: string; evidence: unknown };

export type Investigation = {
  id: string;
  alert_id: string | null;
  service_id: string | null;
  title: string;
  status: 'queued' | 'running' | 'completed' | 'failed';
  findings: Finding[];
  created_at: string;
  updated_at: string;
  completed_at: string | null;
};

export type InvestigationDetail = Investigation & {
  analysis?: { summary: string; root_cause: string; confidence: number; method: string } | null;
  timeline?: { at: string; type: string; description: string; data?: unknown }[];
  recommendations?: { title: string; detail: string; priority: 'high' | 'medium' | 'low' }[];
};

type SilenceMatchers = {
  host?: string;
  service_id?: string;
  rule_id?: string;
  severity?: Severity;
  tags?: Record<string, string>;
};

export type Silence = {
  id: string;
  matchers: SilenceMatchers;
  starts_at: string;
  ends_at: string;
  comment: string;
  recurrence: { rrule: string; duration_minutes: number; timezone: string } | null;
  state: 'active' | 'pending' | 'expired';
  created_at: string;
  created_by: string;
};

type ProblemIssue = { path: string; message: string };

/** RFC 9457 problem+json, as every 4xx/5xx of the API. */
export type Problem = {
  type?: string;
  title?: string;
  status?: number;
  detail?: string;
  errors?: ProblemIssue[];
};
