import { newId } from '@monitor/platform';
import type { TransactionSql } from '../core/database.js';
import type { Alert, AlertNotification, AlertTransition } from '@monitor/schemas';
import { opensInvestigation, toAlertResponse } from '@monitor/schemas';
import type { ServiceIdentity } from '../shards/service-identities.js';
import { alertColumns } from './alert-columns.js';

export type FireAlertInput = {
  orgId: string;
  ruleId: string;
  host: string;
  /** The sample value that completed the window; null for a no-data alert. */
  value: number | null;
  /** Why it fires (default `threshold`). */
  reason?: AlertReason;
  /**
   * The (rule, host) is flapping: the alert is marked so, and its `fired` notification is held
   * (a `settled` message follows once it is stable, see settleAlert).
   */
  flapping?: boolean;
  /** The time of the first breaching sample of the window. */
  startedAt: Date;
  /** The time of the sample that fired. */
  firedAt: Date;
  /**
   * How far the evaluators had read the samples topic when this fired: an investigation it
   * opens waits until storage has caught up with these positions.
   */
  evidencePositions?: readonly StreamPosition[];
  /**
   * The service as the shard holding the host's samples knows it, where that is not this
   * database (issue 59): the alert names it, and this database keeps a copy.
   */
  service?: ServiceIdentity;
};

/** Why an alert fires: its rule's condition held, or its host stopped sending the metric. */
type AlertReason = 'threshold' | 'no_data';

/**
 * The transitions this module notifies: `settled` says where a flapping (rule, host) settled.
 * (Widens the schemas' AlertTransition until it names `settled` itself.)
 */
type NotifiedTransition = AlertTransition | 'settled';

/** A consumer position: every record of `partition` below `nextOffset` has been read. */
export type StreamPosition = { topic: string; partition: number; nextOffset: number };

export type FireAlertResult =
  /** A new active alert, with its notifications queued (and an investigation when it warrants one). */
  | { outcome: 'fired'; alert: Alert }
  /** The (rule, service) had an active alert already (a replay after a lost checkpoint). */
  | { outcome: 'already-active'; alert: Alert }
  /** The rule was deleted or disabled meanwhile: nothing was written. */
  | { outcome: 'rule-gone' };

/**
 * Fires an alert of `input.ruleId` for the host, inside the caller's transaction: the alert row,
 * one outbox row per channel of the rule, and for critical and warning alerts a queued
 * investigation. The rule row is read `for share`, so a concurrent delete or disable waits for
 * this transaction and then resolves what it wrote: no alert outlives its rule. Creates the
 * service row when the writer has not stored the host yet (the evaluator may be ahead of it).
 */
export async function fireAlert(
  tx: TransactionSql,
  input: FireAlertInput,
): Promise<FireAlertResult> {
  const [rule] = await tx<
    {
      name: string;
      metric: string;
      condition: string;
      threshold: number;
      severity: string;
      channels: string[];
    }[]
  >`
    select name, metric, condition, threshold, severity, channels from alert_rules
    where id = ${input.ruleId} and org_id = ${input.orgId} and enabled and deleted_at is null
    for share
  `;
  if (rule === undefined) return { outcome: 'rule-gone' };
  const serviceId = await ensureService(tx, input.orgId, input.host, input.firedAt, input.service);
  const [created] = await tx<AlertWithChannels[]>`
    insert into alerts (id, org_id, rule_id, rule_name, service_id, host, metric, condition,
      threshold, severity, status, value, started_at, fired_at, channels, reason, flapping)
    values (${newId('alr')}, ${input.orgId}, ${input.ruleId}, ${rule.name}, ${serviceId},
      ${input.host}, ${rule.metric}, ${rule.condition}, ${rule.threshold}, ${rule.severity},
      'active', ${input.value}, ${input.startedAt}, ${input.firedAt}, ${tx.array(rule.channels)},
      ${input.reason ?? 'threshold'}, ${input.flapping === true})
    on conflict (rule_id, service_id, md5(labels::text)) where status = 'active' do nothing
    returning ${tx.unsafe(alertColumns)}, channels
  `;
  if (created === undefined) {
    const [existing] = await tx<Alert[]>`
      select ${tx.unsafe(alertColumns)} from alerts
      where rule_id = ${input.ruleId} and service_id = ${serviceId} and status = 'active'
    `;
    if (existing === undefined) throw new Error('fireAlert: conflicting active alert vanished');
    return { outcome: 'already-active', alert: existing };
  }
  let alert = created;
  if (opensInvestigation(alert.severity)) {
    const investigationId = newId('inv');
    await tx`
      insert into investigations (id, org_id, alert_id, service_id, title, window_from, window_to,
        evidence_positions)
      values (${investigationId}, ${input.orgId}, ${alert.id}, ${alert.serviceId},
        ${`${alert.ruleName} on ${alert.host}`}, ${alert.startedAt}, ${alert.firedAt},
        ${JSON.stringify(
          (input.evidencePositions ?? []).map((position) => ({
            topic: position.topic,
            partition: position.partition,
            next_offset: position.nextOffset,
          })),
        )}::text::jsonb)
      on conflict (alert_id) where alert_id is not null do nothing
    `;
    await tx`update alerts set investigation_id = ${investigationId} where id = ${alert.id}`;
    alert = { ...alert, investigationId };
  }
  const { channels, ...fired } = alert;
  if (input.flapping !== true) {
    await enqueueNotifications(tx, input.orgId, fired, channels, 'fired');
  }
  return { outcome: 'fired', alert: fired };
}

export type ResolveAlertsFilter =
  /**
   * The active alert of one (rule, host), resolved by a good sample at `resolvedAt`; with
   * `reason`, only an alert of that reason (a sample resolves a no-data alert, nothing else).
   */
  | { orgId: string; ruleId: string; host: string; reason?: AlertReason }
  /** Every active alert of a rule (deleted or disabled). */
  | { orgId: string; ruleId: string };

export type ResolveAlertsOptions = {
  /**
   * The (rule, host) is flapping at this change: the alert is marked flapping and its
   * `resolved` notification is held (see settleAlert).
   */
  flapping?: boolean;
};

/**
 * Resolves the matching active alerts at `resolvedAt` inside the caller's transaction and queues
 * one `resolved` notification per channel each alert fired with (none while flapping). Returns
 * the resolved alerts (none when nothing was active: idempotent).
 */
export async function resolveAlerts(
  tx: TransactionSql,
  filter: ResolveAlertsFilter,
  resolvedAt: Date,
  options: ResolveAlertsOptions = {},
): Promise<Alert[]> {
  const host = 'host' in filter ? filter.host : null;
  const reason = 'reason' in filter ? (filter.reason ?? null) : null;
  const flapping = options.flapping === true;
  const rows = await tx<AlertWithChannels[]>`
    update alerts set status = 'resolved', resolved_at = greatest(${resolvedAt}, fired_at),
      flapping = flapping or ${flapping}
    where org_id = ${filter.orgId} and rule_id = ${filter.ruleId} and status = 'active'
      and (${host}::text is null or host = ${host}::text)
      and (${reason}::text is null or reason = ${reason}::text)
    returning ${tx.unsafe(alertColumns)}, channels
  `;
  const resolved: Alert[] = [];
  for (const { channels, ...alert } of rows) {
    if (!flapping) await enqueueNotifications(tx, filter.orgId, alert, channels, 'resolved');
    resolved.push(alert);
  }
  return resolved;
}

export type SettleAlertInput = {
  orgId: string;
  ruleId: string;
  host: string;
  /** Where it settled: firing (its active alert) or not (its latest threshold alert). */
  firing: boolean;
};

/**
 * A flapping (rule, host) was stable for its flapping window: unmarks its alert (the active one
 * when it settled firing, else the latest threshold alert) and queues one `settled` message per
 * channel, numbered after any earlier `settled` message of the same alert. Returns the alert,
 * or undefined when there is none (nothing to say).
 */
export async function settleAlert(
  tx: TransactionSql,
  input: SettleAlertInput,
): Promise<Alert | undefined> {
  const [row] = await tx<AlertWithChannels[]>`
    update alerts set flapping = false
    where id = (
      select id from alerts
      where org_id = ${input.orgId} and rule_id = ${input.ruleId} and host = ${input.host}
        and reason = 'threshold' and (status = 'active' or not ${input.firing})
      order by fired_at desc, id desc
      limit 1
    )
    returning ${tx.unsafe(alertColumns)}, channels
  `;
  if (row === undefined) return undefined;
  const { channels, ...alert } = row;
  const [previous] = await tx<{ sequence: number | null }[]>`
    select max(sequence) as sequence from notifications
    where alert_id = ${alert.id} and transition = 'settled'
  `;
  const sequence =
    previous?.sequence === null || previous === undefined ? 0 : previous.sequence + 1;
  await enqueueNotifications(tx, input.orgId, alert, channels, 'settled', sequence);
  return alert;
}

/** The channels the rule had when the alert fired: its notifications go to those. */
export type AlertWithChannels = Alert & { channels: string[] };

async function enqueueNotifications(
  tx: TransactionSql,
  orgId: string,
  alert: Alert,
  channels: readonly string[],
  transition: NotifiedTransition,
  sequence = 0,
): Promise<void> {
  await enqueueAlertNotifications(
    tx,
    orgId,
    [{ ...alert, channels: [...channels] }],
    transition,
    sequence,
  );
}

/**
 * Queues one outbox row per alert and channel it names, for `transition`, in one statement;
 * a row already queued (a replay) is left as it is.
 */
export async function enqueueAlertNotifications(
  tx: TransactionSql,
  orgId: string,
  alerts: readonly AlertWithChannels[],
  transition: NotifiedTransition,
  sequence = 0,
): Promise<void> {
  const rows = alerts.flatMap(({ channels, ...alert }) => {
    const payload: Omit<AlertNotification, 'transition'> & { transition: NotifiedTransition } = {
      transition,
      alert: toAlertResponse(alert),
    };
    return channels.map((channel) => ({
      id: newId('ntf'),
      org_id: orgId,
      alert_id: alert.id,
      transition,
      sequence,
      channel,
      // Migration 17: `:sequence` is appended above 0 only, so fired/resolved keys are unchanged.
      idempotency_key:
        sequence === 0 ? `${alert.id}:${transition}` : `${alert.id}:${transition}:${sequence}`,
      payload,
    }));
  });
  if (rows.length === 0) return;
  // `::text::jsonb`: a jsonb-typed parameter would be JSON.stringify'd a second time.
  await tx`
    insert into notifications (id, org_id, alert_id, transition, sequence, channel,
      idempotency_key, payload)
    select id, org_id, alert_id, transition, sequence, channel, idempotency_key, payload
    from jsonb_to_recordset(${JSON.stringify(rows)}::text::jsonb) as n(
      id text, org_id text, alert_id text, transition text, sequence int, channel text,
      idempotency_key text, payload jsonb
    )
    on conflict (alert_id, transition, sequence, channel) do nothing
  `;
}

/**
 * The service ids of the org's `hosts`, creating minimal rows the writer fills in later, in a
 * few statements whatever their number. A host found in `identities` (its service on another
 * shard) gets that id, and its row here is a copy with the shard's tags.
 */
export async function ensureServices(
  tx: TransactionSql,
  orgId: string,
  hosts: readonly string[],
  seenAt: Date,
  identities: ReadonlyMap<string, ServiceIdentity> = new Map(),
): Promise<Map<string, string>> {
  const names = [...new Set(hosts)];
  if (names.length === 0) return new Map();
  const copies = names.flatMap((name) => {
    const identity = identities.get(name);
    return identity === undefined ? [] : [{ id: identity.id, name, tags: identity.tags }];
  });
  const own = names.filter((name) => !identities.has(name));
  if (own.length > 0) {
    await tx`
      insert into services (id, org_id, name, last_seen)
      select x.id, ${orgId}, x.name, ${seenAt}
      from unnest(${tx.array(own.map(() => newId('svc')))}::text[], ${tx.array(own)}::text[])
        as x(id, name)
      on conflict (org_id, name) do nothing
    `;
  }
  if (copies.length > 0) {
    // Copies of other shards' services (sample shards only: one database has none, nor before
    // migration 41 the column). Their tags follow the shard's; only copies are touched, and so
    // locked: the writer updates its own hosts' rows, never a copy.
    await tx`
      insert into services (id, org_id, name, last_seen, tags, shard_copy)
      select x.id, ${orgId}, x.name, ${seenAt}, x.tags, true
      from jsonb_to_recordset(${JSON.stringify(copies)}::text::jsonb)
        as x(id text, name text, tags jsonb)
      on conflict (org_id, name) do nothing
    `;
    await tx`
      update services s set tags = x.tags
      from jsonb_to_recordset(${JSON.stringify(copies)}::text::jsonb) as x(name text, tags jsonb)
      where s.org_id = ${orgId} and s.name = x.name and s.shard_copy
        and s.tags is distinct from x.tags
    `;
  }
  const stored = await tx<{ id: string; name: string }[]>`
    select id, name from services where org_id = ${orgId} and name = any(${tx.array(names)}::text[])
  `;
  return new Map(stored.map((row) => [row.name, row.id]));
}

/** The service id of (org, host), creating its row here (see ensureServices). */
async function ensureService(
  tx: TransactionSql,
  orgId: string,
  host: string,
  seenAt: Date,
  identity: ServiceIdentity | undefined,
): Promise<string> {
  const ids = await ensureServices(
    tx,
    orgId,
    [host],
    seenAt,
    identity === undefined ? undefined : new Map([[host, identity]]),
  );
  const id = ids.get(host);
  if (id === undefined) throw new Error('ensureService: service vanished');
  return id;
}
