import { newId } from '@monitor/platform';
import type { AlertSeverity } from '@monitor/schemas';
import { opensInvestigation } from '@monitor/schemas';
import { alertColumns } from '../alerts/alert-columns.js';
import type { AlertWithChannels } from '../alerts/alert-transitions.js';
import { enqueueAlertNotifications, ensureServices } from '../alerts/alert-transitions.js';
import type { Queryable, TransactionSql } from '../core/database.js';
import type { ServiceIdentity } from '../shards/service-identities.js';
import type { RuleGroupKey } from './rule-group-key.js';

/** A stored alert of one of the group's rules, as an evaluation reconciles it. */
export type RuleGroupAlertRow = {
  id: string;
  /** The rule's state key in its group (`ruleStateKeys`). */
  ruleKey: string;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  status: 'active' | 'resolved';
  resolvedAtMs: number | null;
};

/** A rule file's alert that starts firing: a new row of `alerts`. */
export type RuleAlertFiring = {
  ruleKey: string;
  /** The alerting rule's name: the alert's `rule_name` and `metric`. */
  ruleName: string;
  /** The service it is about (created when the writer has not stored it yet). */
  host: string;
  severity: AlertSeverity;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  /** The query's value; null when it is not a finite number. */
  value: number | null;
  /** Prometheus' ActiveAt: `started_at`. */
  activeAtMs: number;
  firedAtMs: number;
  /** Prometheus' ValidUntil of its first send to Alertmanagers. */
  validUntilMs: number;
};

/** What one evaluation changes in the alerts of its group's rules. */
export type RuleGroupAlertChanges = {
  fire: RuleAlertFiring[];
  /** Active alerts that stopped firing, at their resolution time. */
  resolve: { id: string; resolvedAtMs: number }[];
  /** Active alerts whose annotations this evaluation changed. */
  annotate: { id: string; annotations: Record<string, string> }[];
  /**
   * Alerts to post to the organization's Alertmanagers again (firing ones with their new
   * validity; resolved ones, within 15 minutes of their resolution, with null).
   */
  resend: { id: string; validUntilMs: number | null }[];
};

export const noRuleGroupAlertChanges: RuleGroupAlertChanges = {
  fire: [],
  resolve: [],
  annotate: [],
  resend: [],
};

/** How far back resolved alerts are read: Prometheus re-sends them for 15 minutes. */
const resolvedLookbackMs = 20 * 60_000;

/**
 * The active alerts of the group's rules, and those resolved up to 20 minutes before `timeMs`
 * (they may still be re-sent).
 */
export async function listRuleGroupAlerts(
  sql: Queryable,
  key: RuleGroupKey,
  timeMs: number,
): Promise<RuleGroupAlertRow[]> {
  const rows = await sql<
    {
      id: string;
      rule_key: string;
      labels: Record<string, string>;
      annotations: Record<string, string>;
      status: 'active' | 'resolved';
      resolved_at: Date | null;
    }[]
  >`
    select a.id, r.rule_key, a.labels, a.annotations, a.status, a.resolved_at
    from prometheus_rules r join alerts a on a.rule_id = r.id
    where r.org_id = ${key.orgId} and r.namespace = ${key.namespace}
      and r.group_name = ${key.name} and a.condition is null
      and (a.resolved_at is null or a.resolved_at >= ${new Date(timeMs - resolvedLookbackMs)})
  `;
  return rows.map((row) => ({
    id: row.id,
    ruleKey: row.rule_key,
    labels: row.labels,
    annotations: row.annotations,
    status: row.status,
    resolvedAtMs: row.resolved_at === null ? null : row.resolved_at.getTime(),
  }));
}

/**
 * Applies an evaluation's alert changes inside the caller's transaction (the one that saves the
 * group's state): resolutions and new alerts with their outbox rows (to the organization's
 * Alertmanagers, when it has that channel) and, for critical and warning alerts, queued
 * investigations; annotations; re-sends. Idempotent: an alert already active is not fired
 * twice, an alert already resolved is not resolved again.
 */
export async function applyRuleGroupAlertChanges(
  tx: TransactionSql,
  key: RuleGroupKey,
  changes: RuleGroupAlertChanges,
  /** The firing hosts' services on other shards (see ensureServices). */
  services: ReadonlyMap<string, ServiceIdentity> = new Map(),
): Promise<void> {
  const { orgId } = key;
  if (changes.resolve.length > 0) {
    const rows = await tx<AlertWithChannels[]>`
      update alerts a set status = 'resolved', resolved_at = greatest(x.resolve_at, a.fired_at)
      from jsonb_to_recordset(${json(
        changes.resolve.map((r) => ({ alert_id: r.id, resolve_at: iso(r.resolvedAtMs) })),
      )}::text::jsonb) as x(alert_id text, resolve_at timestamptz)
      where a.id = x.alert_id and a.status = 'active' and a.org_id = ${orgId}
      returning ${tx.unsafe(alertColumns)}, channels
    `;
    await enqueueAlertNotifications(tx, orgId, rows, 'resolved');
  }
  const needsChannel = changes.fire.length > 0 || changes.resend.length > 0;
  const channels = needsChannel && (await hasAlertmanager(tx, orgId)) ? ['alertmanager'] : [];
  if (changes.fire.length > 0) await fire(tx, key, changes.fire, channels, services);
  if (changes.annotate.length > 0) {
    await tx`
      update alerts a set annotations = x.latest
      from jsonb_to_recordset(${json(
        changes.annotate.map((r) => ({ alert_id: r.id, latest: r.annotations })),
      )}::text::jsonb) as x(alert_id text, latest jsonb)
      where a.id = x.alert_id and a.status = 'active' and a.org_id = ${orgId}
        and a.annotations is distinct from x.latest
    `;
  }
  // Without an Alertmanager there is nothing to re-send to (Prometheus sends to none either).
  if (changes.resend.length > 0 && channels.length > 0) {
    await tx`
      update alerts a set resend_due_at = now(), valid_until = coalesce(x.until, a.valid_until)
      from jsonb_to_recordset(${json(
        changes.resend.map((r) => ({
          alert_id: r.id,
          until: r.validUntilMs === null ? null : iso(r.validUntilMs),
        })),
      )}::text::jsonb) as x(alert_id text, until timestamptz)
      where a.id = x.alert_id and a.org_id = ${orgId}
    `;
  }
}

async function fire(
  tx: TransactionSql,
  key: RuleGroupKey,
  firing: readonly RuleAlertFiring[],
  channels: readonly string[],
  identities: ReadonlyMap<string, ServiceIdentity>,
): Promise<void> {
  const { orgId } = key;
  const ruleKeys = [...new Set(firing.map((f) => f.ruleKey))];
  await tx`
    insert into prometheus_rules (id, org_id, namespace, group_name, rule_key)
    select x.id, ${orgId}, ${key.namespace}, ${key.name}, x.rule_key
    from unnest(${tx.array(ruleKeys.map(() => newId('rul')))}::text[],
      ${tx.array(ruleKeys)}::text[]) as x(id, rule_key)
    on conflict (org_id, namespace, group_name, rule_key) do nothing
  `;
  const rules = await tx<{ id: string; rule_key: string }[]>`
    select id, rule_key from prometheus_rules
    where org_id = ${orgId} and namespace = ${key.namespace} and group_name = ${key.name}
      and rule_key = any(${tx.array(ruleKeys)}::text[])
  `;
  const ruleIds = new Map(rules.map((rule) => [rule.rule_key, rule.id]));
  const firstFiredMs = Math.min(...firing.map((f) => f.firedAtMs));
  const services = await ensureServices(
    tx,
    orgId,
    firing.map((f) => f.host),
    new Date(firstFiredMs),
    identities,
  );
  const rows = firing.map((f) => ({
    id: newId('alr'),
    rule_id: ruleIds.get(f.ruleKey),
    rule_name: f.ruleName,
    service_id: services.get(f.host),
    host: f.host,
    severity: f.severity,
    value: f.value,
    started_at: iso(f.activeAtMs),
    fired_at: iso(f.firedAtMs),
    labels: f.labels,
    annotations: f.annotations,
    valid_until: iso(f.validUntilMs),
  }));
  const created = await tx<AlertWithChannels[]>`
    insert into alerts (id, org_id, rule_id, rule_name, service_id, host, metric, severity,
      status, value, started_at, fired_at, channels, labels, annotations, valid_until)
    select x.id, ${orgId}, x.rule_id, x.rule_name, x.service_id, x.host, x.rule_name,
      x.severity, 'active', x.value, x.started_at, x.fired_at, ${tx.array([...channels])}::text[],
      x.labels, x.annotations, x.valid_until
    from jsonb_to_recordset(${json(rows)}::text::jsonb) as x(id text, rule_id text,
      rule_name text, service_id text, host text, severity text, value double precision,
      started_at timestamptz, fired_at timestamptz, labels jsonb, annotations jsonb,
      valid_until timestamptz)
    on conflict (rule_id, service_id, md5(labels::text)) where status = 'active' do nothing
    returning ${tx.unsafe(alertColumns)}, channels
  `;
  const investigated = created
    .filter((alert) => opensInvestigation(alert.severity))
    .map((alert) => ({ ...alert, investigationId: newId('inv') }));
  if (investigated.length > 0) {
    await tx`
      insert into investigations (id, org_id, alert_id, service_id, title, window_from,
        window_to, evidence_positions)
      select x.id, ${orgId}, x.alert_id, x.service_id, x.title, x.window_from, x.window_to,
        '[]'::jsonb
      from jsonb_to_recordset(${json(
        investigated.map((alert) => ({
          id: alert.investigationId,
          alert_id: alert.id,
          service_id: alert.serviceId,
          title: `${alert.ruleName} on ${alert.host}`,
          window_from: alert.startedAt.toISOString(),
          window_to: alert.firedAt.toISOString(),
        })),
      )}::text::jsonb) as x(id text, alert_id text, service_id text, title text,
        window_from timestamptz, window_to timestamptz)
      on conflict (alert_id) where alert_id is not null do nothing
    `;
    await tx`
      update alerts a set investigation_id = x.opened
      from jsonb_to_recordset(${json(
        investigated.map((alert) => ({ alert_id: alert.id, opened: alert.investigationId })),
      )}::text::jsonb) as x(alert_id text, opened text)
      where a.id = x.alert_id
    `;
  }
  const byId = new Map(investigated.map((alert) => [alert.id, alert.investigationId]));
  await enqueueAlertNotifications(
    tx,
    orgId,
    created.map((alert) => ({ ...alert, investigationId: byId.get(alert.id) ?? null })),
    'fired',
  );
}

/**
 * Resolves every active alert of the group's rules whose state key is not in `keep` (all of
 * them without it) at `resolvedAt`, queueing their `resolved` notifications, and forgets those
 * rules' ids: the rules left the group (or the group was deleted).
 */
export async function resolveRemovedRuleAlerts(
  tx: TransactionSql,
  key: RuleGroupKey,
  resolvedAt: Date,
  keep: readonly string[] = [],
): Promise<void> {
  const { orgId } = key;
  const removed = await tx<{ id: string }[]>`
    delete from prometheus_rules
    where org_id = ${orgId} and namespace = ${key.namespace} and group_name = ${key.name}
      and not (rule_key = any(${tx.array([...keep])}::text[]))
    returning id
  `;
  if (removed.length === 0) return;
  const rows = await tx<AlertWithChannels[]>`
    update alerts a set status = 'resolved', resolved_at = greatest(${resolvedAt}, a.fired_at)
    where a.org_id = ${orgId} and a.status = 'active'
      and a.rule_id = any(${tx.array(removed.map((rule) => rule.id))}::text[])
    returning ${tx.unsafe(alertColumns)}, channels
  `;
  await enqueueAlertNotifications(tx, orgId, rows, 'resolved');
}

async function hasAlertmanager(tx: TransactionSql, orgId: string): Promise<boolean> {
  const [row] = await tx<{ found: boolean }[]>`
    select exists (select 1 from notification_channels
      where org_id = ${orgId} and type = 'alertmanager') as found
  `;
  return row?.found === true;
}

/** A JSON parameter read with `::text::jsonb` (a jsonb-typed one would be encoded twice). */
function json(value: unknown): string {
  return JSON.stringify(value);
}

function iso(ms: number): string {
  return new Date(ms).toISOString();
}
