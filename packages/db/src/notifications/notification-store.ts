import type { AlertNotification, AlertTransition } from '@monitor/schemas';
import type { Database } from '../core/database.js';
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
    async claimDue({ limit, leaseMs, maxAttempts, onAbandonedFailed }) {
      const rows = await sql.begin(async (tx) => {
        // The database clock decides due-ness and leases, so replicas' clocks need not agree.
        // A claim moves next_attempt_at to the lease's end: the due index alone then finds both
        // never-claimed rows and rows whose lease ended. Leases are whole milliseconds so the
        // value survives the round trip through a JS Date as a fencing token.
        const claimed = await tx<ClaimedRow[]>`
          with due as (
            select id, org_id, channel, lease_until is not null as abandoned
            from notifications
            where status = 'pending' and next_attempt_at <= now()
            order by next_attempt_at, id
            limit ${limit}
            for update skip locked
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
          where n.id = leased.id
          returning n.id, n.org_id, n.alert_id, n.transition, n.channel, n.idempotency_key,
            n.payload, n.status, n.attempts, n.lease_until, leased.abandoned, c.config
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
