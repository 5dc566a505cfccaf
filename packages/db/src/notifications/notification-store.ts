import { newId } from '@monitor/platform';
import type { Alert, AlertNotification, AlertTransition } from '@monitor/schemas';
import { toAlertResponse } from '@monitor/schemas';
import { alertColumns } from '../alerts/alert-columns.js';
import { silencedExpression } from '../alerts/alert-queries.js';
import type { Database, Queryable } from '../core/database.js';
import { silencesInForce } from '../silences/silence-store.js';
import type { ChannelType } from './notification-channel-store.js';

type NotificationStatus = 'pending' | 'delivered' | 'failed' | 'suppressed';

export type ClaimNotificationsOptions = {
  /** Claims at most this many rows. */
  limit: number;
  /**
   * How long a claim holds. A notifier that dies mid-delivery frees its rows when it ends; keep
   * it well above the longest delivery (the senders' timeouts).
   */
  leaseMs: number;
  /** A lease that ended without an outcome counts as a failed attempt; at this many, `failed`. */
  maxAttempts: number;
  /**
   * Told of the messages this claim marked `failed` because their last lease ended without an
   * outcome (a notifier died on each attempt): they are not returned, so report them here.
   */
  onAbandonedFailed?: (failed: { id: string; alertId: string; channel: string }[]) => void;
  /**
   * The instant silences are judged at (default: now): due messages of an alert a silence in
   * force then matches are recorded `suppressed` instead of being claimed, never sent.
   */
  now?: Date;
  /** Told of the messages this claim recorded `suppressed`. */
  onSuppressed?: (suppressed: { id: string; alertId: string; channel: string }[]) => void;
};

/** What `enqueueFollowUps` queued. */
type FollowUps = {
  /** Alerts notified again (`renotified`): active, unacknowledged, unsilenced, rule's renotify_minutes past. */
  renotified: number;
  /** Alerts notified because the silence over them ended while they are still active. */
  unsilenced: number;
};

/** An outbox row claimed for one delivery attempt. */
export type ClaimedNotification = {
  id: string;
  orgId: string;
  alertId: string;
  transition: AlertTransition;
  channel: ChannelType;
  /** `alert_id:transition`: goes out with the message. */
  idempotencyKey: string;
  payload: AlertNotification;
  /** The number of the attempt this claim makes, from 1. */
  attempt: number;
  /** The claim's fencing token: `recordAttempt` only succeeds while the claim holds. */
  leaseUntil: Date;
  /** The organization's target of the channel at claim time; undefined when none is set. */
  target: Readonly<Record<string, unknown>> | undefined;
  /** The rule's `message_template` at claim time; null: the default message. */
  messageTemplate: string | null;
  /** The tags of the alert's service at claim time (`{{tags.<key>}}`). */
  tags: Readonly<Record<string, string>>;
  /**
   * When the alert resolved, read at claim time; null while it is active. A message about the
   * alert firing that is retried after it resolved can say so (Alertmanager takes the latest
   * state, and a late firing post would reopen the alert there).
   */
  alertResolvedAt: Date | null;
  /**
   * An alert of a rule file: Prometheus' ValidUntil as of its latest send, read at claim time
   * (Alertmanager takes it for resolved after that); null for other alerts.
   */
  alertValidUntil: Date | null;
};

export type RecordAttemptInput = {
  notification: Pick<ClaimedNotification, 'id' | 'attempt' | 'leaseUntil'>;
  attemptedAt: Date;
  durationMs: number;
  /** The receiver's answer (`HTTP 200`, `250 OK`) or why the attempt failed. */
  detail: string;
} & (
  | { outcome: 'delivered' }
  /** `retryInMs` undefined: no retry follows, the row ends `failed`. */
  | { outcome: 'failed'; retryInMs: number | undefined }
);

type NotificationAttemptRecord = {
  attempt: number;
  attemptedAt: Date;
  outcome: 'delivered' | 'failed';
  detail: string;
  durationMs: number;
};

export type NotificationRecord = {
  id: string;
  alertId: string;
  channel: ChannelType;
  transition: AlertTransition;
  idempotencyKey: string;
  status: NotificationStatus;
  attempts: number;
  /** When a pending row is due (or its lease ends); null once delivered or failed. */
  nextAttemptAt: Date | null;
  lastError: string | null;
  createdAt: Date;
  deliveredAt: Date | null;
  /** Oldest first. */
  attemptLog: NotificationAttemptRecord[];
};

export type NotificationStore = {
  /**
   * Claims due pending rows for this caller, safely across replicas (`for update skip locked`,
   * then a lease). A row whose previous lease ended without an outcome gets a failed attempt
   * recorded first (and ends `failed` when that exhausts `maxAttempts`): it is never lost, and
   * a message that kills its notifier cannot loop forever.
   */
  claimDue(options: ClaimNotificationsOptions): Promise<ClaimedNotification[]>;
  /**
   * Records the attempt and moves the row on: `delivered`, back to `pending` after `retryInMs`,
   * or `failed`. Returns false, writing nothing, when the claim's lease was lost meanwhile (the
   * row went to another notifier, which will deliver it again: at-least-once).
   */
  recordAttempt(input: RecordAttemptInput): Promise<boolean>;
  /** Every outbox row of the alert, oldest first; undefined when the org has no such alert. */
  listForAlert(orgId: string, alertId: string): Promise<NotificationRecord[] | undefined>;
  /**
   * Queues what time alone makes due at `now`: `unsilenced` messages of active alerts whose
   * latest message was suppressed and that no silence matches any more, and `renotified`
   * messages of active, unacknowledged, unsilenced, not flapping alerts whose rule has
   * `renotify_minutes` and whose last message is that old. Safe across replicas and replays:
   * each repeat takes the next `sequence`, and the unique key drops a second writer's copy.
   */
  enqueueFollowUps(now: Date): Promise<FollowUps>;
};

/** The detail of the failed attempt a lease that ended without an outcome stands for. */
export const abandonedAttemptDetail =
  'no outcome recorded before the lease ended: the notifier stopped or stalled mid-delivery';

type ClaimedRow = {
  id: string;
  org_id: string;
  alert_id: string;
  transition: AlertTransition;
  channel: ChannelType;
  idempotency_key: string;
  payload: AlertNotification;
  status: NotificationStatus;
  attempts: number;
  lease_until: Date | null;
  abandoned: boolean;
  config: Record<string, unknown> | null;
  message_template: string | null;
  tags: Record<string, string> | null;
  alert_resolved_at: Date | null;
  alert_valid_until: Date | null;
};

type NotificationRow = {
  id: string;
  alert_id: string;
  channel: ChannelType;
  transition: AlertTransition;
  idempotency_key: string;
  status: NotificationStatus;
  attempts: number;
  next_attempt_at: Date;
  last_error: string | null;
  created_at: Date;
  delivered_at: Date | null;
};

type AttemptRow = {
  notification_id: string;
  attempt: number;
  attempted_at: Date;
  outcome: 'delivered' | 'failed';
  detail: string;
  duration_ms: number;
};

export function createNotificationStore(db: Database): NotificationStore {
  const { sql } = db;
  return {
    async claimDue({ limit, leaseMs, maxAttempts, onAbandonedFailed, now, onSuppressed }) {
      const at = now ?? new Date();
      const silences = await silencesInForce(sql, at);
      const matchers = silences.map((silence) => ({ ...silence.matchers, orgId: silence.orgId }));
      const suppressedRows = await sql.begin(async (tx) => {
        const silenced = silencedExpression(tx, matchers);
        // Silences act on notifications: what is due for a silenced alert is recorded, not sent.
        return tx<{ id: string; alert_id: string; channel: string }[]>`
          with silenced as (
            select n.id from notifications n join alerts a on a.id = n.alert_id
            where n.status = 'pending' and n.next_attempt_at <= now() and ${silenced}
            for update of n skip locked
          )
          update notifications n set status = 'suppressed', lease_until = null
          from silenced where n.id = silenced.id
          returning n.id, n.alert_id, n.channel
        `;
      });
      if (suppressedRows.length > 0) {
        onSuppressed?.(
          suppressedRows.map((row) => ({
            id: row.id,
            alertId: row.alert_id,
            channel: row.channel,
          })),
        );
      }
      const rows = await sql.begin(async (tx) => {
        const silenced = silencedExpression(tx, matchers);
        // The database clock decides due-ness and leases, so replicas' clocks need not agree.
        // A claim moves next_attempt_at to the lease's end: the due index alone then finds both
        // never-claimed rows and rows whose lease ended. Leases are whole milliseconds so the
        // value survives the round trip through a JS Date as a fencing token.
        const claimed = await tx<ClaimedRow[]>`
          with due as (
            select n.id, n.org_id, n.channel, n.alert_id, n.lease_until is not null as abandoned
            from notifications n join alerts a on a.id = n.alert_id
            -- A row that became due for an alert silenced meanwhile waits for the next round's
            -- suppression instead of going out.
            where n.status = 'pending' and n.next_attempt_at <= now() and not ${silenced}
            order by n.next_attempt_at, n.id
            limit ${limit}
            for update of n skip locked
          ), leased as (
            select *, date_trunc('milliseconds', now() + ${leaseMs}::double precision * interval '1 millisecond')
              as lease_until
            from due
          )
          update notifications n set
            attempts = n.attempts + leased.abandoned::int,
            status = case when leased.abandoned and n.attempts + 1 >= ${maxAttempts}
              then 'failed' else 'pending' end,
            lease_until = case when leased.abandoned and n.attempts + 1 >= ${maxAttempts}
              then null else leased.lease_until end,
            next_attempt_at = leased.lease_until,
            last_error = case when leased.abandoned then ${abandonedAttemptDetail}
              else n.last_error end
          from leased left join notification_channels c
            on c.org_id = leased.org_id and c.type = leased.channel
          left join alerts al on al.id = leased.alert_id
          left join alert_rules r on r.id = al.rule_id
          left join services sv on sv.id = al.service_id
          where n.id = leased.id
          returning n.id, n.org_id, n.alert_id, n.transition, n.channel, n.idempotency_key,
            n.payload, n.status, n.attempts, n.lease_until, leased.abandoned, c.config,
            r.message_template, sv.tags, al.resolved_at as alert_resolved_at,
            al.valid_until as alert_valid_until
        `;
        const abandoned = claimed.filter((row) => row.abandoned);
        if (abandoned.length > 0) {
          await tx`
            insert into notification_attempts
              (notification_id, attempt, attempted_at, outcome, detail, duration_ms)
            select id, attempt, now(), 'failed', ${abandonedAttemptDetail}, 0
            from unnest(${tx.array(abandoned.map((row) => row.id))}::text[],
              ${tx.array(abandoned.map((row) => row.attempts))}::int[]) as a(id, attempt)
          `;
        }
        return claimed;
      });
      const failed = rows.filter((row) => row.status === 'failed');
      if (failed.length > 0) {
        onAbandonedFailed?.(
          failed.map((row) => ({ id: row.id, alertId: row.alert_id, channel: row.channel })),
        );
      }
      return rows.flatMap((row) =>
        row.status === 'pending' && row.lease_until !== null
          ? [
              {
                id: row.id,
                orgId: row.org_id,
                alertId: row.alert_id,
                transition: row.transition,
                channel: row.channel,
                idempotencyKey: row.idempotency_key,
                payload: row.payload,
                attempt: row.attempts + 1,
                leaseUntil: row.lease_until,
                target: row.config ?? undefined,
                messageTemplate: row.message_template,
                tags: row.tags ?? {},
                alertResolvedAt: row.alert_resolved_at,
                alertValidUntil: row.alert_valid_until,
              },
            ]
          : [],
      );
    },

    async recordAttempt(input) {
      const { notification, attemptedAt, durationMs, detail } = input;
      const status: NotificationStatus =
        input.outcome === 'delivered'
          ? 'delivered'
          : input.retryInMs === undefined
            ? 'failed'
            : 'pending';
      const retryInMs = input.outcome === 'failed' ? (input.retryInMs ?? 0) : 0;
      const deliveredAt =
        input.outcome === 'delivered' ? new Date(attemptedAt.getTime() + durationMs) : null;
      const lastError = input.outcome === 'failed' ? detail : null;
      return sql.begin(async (tx) => {
        const updated = await tx`
          update notifications set
            attempts = ${notification.attempt},
            status = ${status},
            lease_until = null,
            next_attempt_at = case when ${status} = 'pending'
              then now() + ${retryInMs}::double precision * interval '1 millisecond' else next_attempt_at end,
            last_error = coalesce(${lastError}::text, last_error),
            delivered_at = ${deliveredAt}
          where id = ${notification.id} and status = 'pending'
            and lease_until = ${notification.leaseUntil}
          returning id
        `;
        if (updated.length === 0) return false;
        await tx`
          insert into notification_attempts
            (notification_id, attempt, attempted_at, outcome, detail, duration_ms)
          values (${notification.id}, ${notification.attempt}, ${attemptedAt}, ${input.outcome},
            ${detail}, ${Math.max(0, Math.round(durationMs))})
        `;
        return true;
      });
    },

    async enqueueFollowUps(now) {
      const silences = await silencesInForce(sql, now);
      const silenced = silencedExpression(
        sql,
        silences.map((silence) => ({ ...silence.matchers, orgId: silence.orgId })),
      );
      // First the ends of silences: an unsilenced message is also the latest one renotify
      // counts from.
      const unsilenced = await sql<{ id: string; sequence: number }[]>`
        select a.id, coalesce((select max(x.sequence) from notifications x
          where x.alert_id = a.id and x.transition = 'unsilenced'), 0) + 1 as sequence
        from alerts a
        where a.status = 'active' and not a.flapping and not ${silenced}
          and exists (
            select 1 from notifications x
            where x.alert_id = a.id and x.status = 'suppressed'
              and not exists (select 1 from notifications y
                where y.alert_id = a.id and y.channel = x.channel and y.id > x.id))
      `;
      const unsilencedCount = await enqueueRepeats(sql, unsilenced, 'unsilenced', now);
      const renotify = await sql<{ id: string; sequence: number }[]>`
        select a.id, coalesce((select max(x.sequence) from notifications x
          where x.alert_id = a.id and x.transition = 'renotified'), 0) + 1 as sequence
        from alerts a join alert_rules r on r.id = a.rule_id
        where a.status = 'active' and a.acknowledged_at is null and not a.flapping
          and r.renotify_minutes is not null and cardinality(a.channels) > 0
          and not ${silenced}
          and coalesce((select max(x.created_at) from notifications x
              where x.alert_id = a.id
                and x.transition in ('fired', 'renotified', 'unsilenced', 'settled')),
            a.fired_at) + r.renotify_minutes * interval '1 minute' <= ${now}::timestamptz
      `;
      const renotifiedCount = await enqueueRepeats(sql, renotify, 'renotified', now);
      return { renotified: renotifiedCount, unsilenced: unsilencedCount };
    },

    async listForAlert(orgId, alertId) {
      const [alert] = await sql`
        select 1 from alerts where id = ${alertId} and org_id = ${orgId}
      `;
      if (alert === undefined) return undefined;
      const rows = await sql<NotificationRow[]>`
        select id, alert_id, channel, transition, idempotency_key, status, attempts,
          next_attempt_at, last_error, created_at, delivered_at
        from notifications
        where alert_id = ${alertId} and org_id = ${orgId}
        order by created_at, transition = 'resolved', channel
      `;
      if (rows.length === 0) return [];
      const attempts = await sql<AttemptRow[]>`
        select notification_id, attempt, attempted_at, outcome, detail, duration_ms
        from notification_attempts
        where notification_id = any(${sql.array(rows.map((row) => row.id))}::text[])
        order by notification_id, attempt
      `;
      const logs = new Map<string, NotificationAttemptRecord[]>();
      for (const row of attempts) {
        const log = logs.get(row.notification_id) ?? [];
        log.push({
          attempt: row.attempt,
          attemptedAt: row.attempted_at,
          outcome: row.outcome,
          detail: row.detail,
          durationMs: row.duration_ms,
        });
        logs.set(row.notification_id, log);
      }
      return rows.map((row) => ({
        id: row.id,
        alertId: row.alert_id,
        channel: row.channel,
        transition: row.transition,
        idempotencyKey: row.idempotency_key,
        status: row.status,
        attempts: row.attempts,
        nextAttemptAt: row.status === 'pending' ? row.next_attempt_at : null,
        lastError: row.last_error,
        createdAt: row.created_at,
        deliveredAt: row.delivered_at,
        attemptLog: logs.get(row.id) ?? [],
      }));
    },
  };
}

/**
 * Queues one message per channel each alert fired with, as repeat number `sequence` of
 * `transition`, created at `now`; a copy another notifier queued first is dropped by the unique
 * key. Returns how many alerts got new messages.
 */
async function enqueueRepeats(
  sql: Queryable,
  alerts: readonly { id: string; sequence: number }[],
  transition: 'renotified' | 'unsilenced',
  now: Date,
): Promise<number> {
  if (alerts.length === 0) return 0;
  const sequences = new Map(alerts.map((alert) => [alert.id, alert.sequence]));
  const rows = await sql<(Alert & { orgId: string; channels: string[] })[]>`
    select ${sql.unsafe(alertColumns)}, org_id as "orgId", channels from alerts
    where id = any(${sql.array(alerts.map((alert) => alert.id))}::text[])
  `;
  const outbox = rows.flatMap(({ orgId, channels, ...alert }) => {
    const sequence = sequences.get(alert.id) ?? 1;
    const payload: AlertNotification = { transition, alert: toAlertResponse(alert) };
    return channels.map((channel) => ({
      id: newId('ntf'),
      org_id: orgId,
      alert_id: alert.id,
      transition,
      channel,
      idempotency_key: `${alert.id}:${transition}:${sequence}`,
      payload,
      sequence,
      created_at: now.toISOString(),
    }));
  });
  if (outbox.length === 0) return 0;
  // `::text::jsonb`: a jsonb-typed parameter would be JSON.stringify'd a second time.
  const inserted = await sql<{ alert_id: string }[]>`
    insert into notifications (id, org_id, alert_id, transition, channel, idempotency_key,
      payload, sequence, created_at, next_attempt_at)
    select id, org_id, alert_id, transition, channel, idempotency_key, payload, sequence,
      created_at, now()
    from jsonb_to_recordset(${JSON.stringify(outbox)}::text::jsonb) as n(
      id text, org_id text, alert_id text, transition text, channel text, idempotency_key text,
      payload jsonb, sequence int, created_at timestamptz
    )
    on conflict (alert_id, transition, sequence, channel) do nothing
    returning alert_id
  `;
  return new Set(inserted.map((row) => row.alert_id)).size;
}
