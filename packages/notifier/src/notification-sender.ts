import type { ClaimedNotification } from '@monitor/db';
import type { NotificationChannelType, NotificationTargets } from '@monitor/schemas';

/**
 * What every channel sends of a claimed outbox row: its message, and its idempotency key
 * (`alert_id:transition`), by which receivers drop duplicates (delivery is at-least-once).
 * With the rule's `messageTemplate`, the text of the message is that template rendered with the
 * alert and its service's `tags`.
 */
export type OutgoingNotification = Pick<ClaimedNotification, 'idempotencyKey' | 'payload'> &
  Partial<
    Pick<ClaimedNotification, 'messageTemplate' | 'tags' | 'alertResolvedAt' | 'alertValidUntil'>
  >;

/** The outcome of one delivery attempt. */
export type DeliveryResult = {
  delivered: boolean;
  /** What the receiver answered (`HTTP 200`, `250 OK`) or why the attempt failed. */
  detail: string;
  /** False when trying again cannot succeed (a refused target); a failure is retried otherwise. */
  retriable?: boolean;
};

export interface NotificationSender<Target> {
  /** Makes one delivery attempt; resolves with its outcome and never rejects for a failed one. */
  send(notification: OutgoingNotification, target: Target): Promise<DeliveryResult>;
}

/** A sender per channel type, each taking that channel's target. */
export type NotificationSenders = {
  [Channel in NotificationChannelType]: NotificationSender<NotificationTargets[Channel]>;
};

/** The header every HTTP message and every email carries the idempotency key in. */
export const idempotencyKeyHeader = 'Idempotency-Key';
