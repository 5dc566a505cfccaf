import type { ClaimedNotification, NotificationStore } from '@monitor/db';
import type { Logger } from '@monitor/platform';
import { createPollLoop } from '@monitor/platform';
import type { NotificationChannelType } from '@monitor/schemas';
import { notificationTargetSchemas } from '@monitor/schemas';
import type {
  DeliveryResult,
  NotificationSenders,
  OutgoingNotification,
} from './notification-sender.js';
import type { RetryPolicy } from './retry-policy.js';
import { defaultRetryPolicy, retryDelayMs } from './retry-policy.js';

/** The part of the outbox store the notifier uses (follow-ups: renotify, ends of silences). */
export type NotifierStore = Pick<NotificationStore, 'claimDue' | 'recordAttempt'> &
  Partial<Pick<NotificationStore, 'enqueueFollowUps'>>;

/** Counters of deliveries; the server maps them to Prometheus counters. */
export interface NotifierMetrics {
  /** A message was delivered (once per message). */
  sent(channel: NotificationChannelType): void;
  /** A delivery attempt failed; `final` when no retry follows (the message is `failed`). */
  failed(channel: NotificationChannelType, final: boolean): void;
}

export type NotifierDeps = {
  store: NotifierStore;
  senders: NotificationSenders;
  logger: Logger;
  metrics?: NotifierMetrics;
  /** The clock of attempt times and durations; `Date.now` when omitted. */
  nowMs?: () => number;
  /** Jitter of the backoff, [0, 1); `Math.random` when omitted. */
  random?: () => number;
};

export type NotifierOptions = {
  /** The wait between rounds that found less than a full batch. */
  pollIntervalMs: number;
  /** Messages claimed (and delivered concurrently) per round. */
  batchSize: number;
  /** How long a claim holds: well above the senders' timeouts. */
  leaseMs: number;
  retry: RetryPolicy;
};

export const defaultNotifierOptions: NotifierOptions = {
  pollIntervalMs: 1_000,
  batchSize: 20,
  leaseMs: 60_000,
  retry: defaultRetryPolicy,
};

/** What one round did. */
type NotifierRound = {
  claimed: number;
  delivered: number;
  /** Failed attempts with a retry scheduled. */
  retrying: number;
  /** Messages that ended `failed` in this round. */
  failed: number;
  /** Messages recorded `suppressed` (a silence matched their alert) instead of being sent. */
  suppressed: number;
  /** Messages queued this round because time made them due (renotify, a silence's end). */
  followUps: number;
  /** Outcomes not recorded: the lease was lost, or the database failed (the lease then ends). */
  unrecorded: number;
};

export type Notifier = {
  /** Claims the due messages and makes one attempt at each (tests, and the loop's body). */
  runOnce(): Promise<NotifierRound>;
  /** Starts the poll loop; a second call does nothing. */
  start(): void;
  /** Stops polling and resolves once the in-flight deliveries are recorded. */
  stop(): Promise<void>;
};

type AttemptOutcome = 'delivered' | 'retrying' | 'failed' | 'unrecorded';

/**
 * The notifier role's worker: drains the durable outbox (`notifications`) through the senders.
 * At-least-once: a message is marked delivered only after its receiver accepted it, so a crash
 * in between sends it again later, with the same idempotency key.
 */
export function createNotifier(
  deps: NotifierDeps,
  options: NotifierOptions = defaultNotifierOptions,
): Notifier {
  const nowMs = deps.nowMs ?? Date.now;
  const random = deps.random ?? Math.random;
  const logger = deps.logger;

  async function attempt(claim: ClaimedNotification): Promise<AttemptOutcome> {
    const attemptedAtMs = nowMs();
    const { result, final } = await deliver(claim, deps.senders);
    const durationMs = Math.max(0, nowMs() - attemptedAtMs);
    const retryInMs =
      result.delivered || final ? undefined : retryDelayMs(claim.attempt, options.retry, random);
    let recorded: boolean;
    try {
      recorded = await deps.store.recordAttempt({
        notification: claim,
        attemptedAt: new Date(attemptedAtMs),
        durationMs,
        detail: result.detail,
        ...(result.delivered
          ? { outcome: 'delivered' as const }
          : { outcome: 'failed' as const, retryInMs }),
      });
    } catch (err) {
      logger.warn({ err, notificationId: claim.id }, 'recording a delivery attempt failed');
      recorded = false;
    }
    const fields = {
      notificationId: claim.id,
      alertId: claim.alertId,
      channel: claim.channel,
      attempt: claim.attempt,
      detail: result.detail,
    };
    if (result.delivered) deps.metrics?.sent(claim.channel);
    else deps.metrics?.failed(claim.channel, retryInMs === undefined);
    if (!recorded) {
      logger.warn(fields, 'delivery outcome not recorded: the claim was lost');
      return 'unrecorded';
    }
    if (result.delivered) return 'delivered';
    if (retryInMs === undefined) {
      logger.warn(fields, 'notification failed for good');
      return 'failed';
    }
    logger.info({ ...fields, retryInMs }, 'notification attempt failed; retrying');
    return 'retrying';
  }

  async function runOnce(): Promise<NotifierRound> {
    // One clock reading per round: silences and renotify intervals are judged at that instant.
    const now = new Date(nowMs());
    const followUps = (await deps.store.enqueueFollowUps?.(now)) ?? {
      renotified: 0,
      unsilenced: 0,
    };
    let suppressed = 0;
    const claims = await deps.store.claimDue({
      limit: options.batchSize,
      leaseMs: options.leaseMs,
      maxAttempts: options.retry.maxAttempts,
      now,
      onSuppressed(rows) {
        suppressed += rows.length;
        for (const row of rows) {
          logger.info(
            { notificationId: row.id, alertId: row.alertId, channel: row.channel },
            'notification suppressed: a silence matches its alert',
          );
        }
      },
      onAbandonedFailed(failed) {
        for (const message of failed) {
          logger.warn(
            { notificationId: message.id, alertId: message.alertId, channel: message.channel },
            'notification failed for good: its notifier stopped mid-delivery on every attempt',
          );
          deps.metrics?.failed(message.channel as NotificationChannelType, true);
        }
      },
    });
    const outcomes = await Promise.all(claims.map(attempt));
    const count = (outcome: AttemptOutcome) => outcomes.filter((o) => o === outcome).length;
    const round: NotifierRound = {
      claimed: claims.length,
      delivered: count('delivered'),
      retrying: count('retrying'),
      failed: count('failed'),
      unrecorded: count('unrecorded'),
      suppressed,
      followUps: followUps.renotified + followUps.unsilenced,
    };
    if (round.claimed > 0 || round.suppressed > 0 || round.followUps > 0) {
      logger.info(round, 'notification round');
    }
    return round;
  }

  const loop = createPollLoop({
    round: async () => ({ moreWaiting: (await runOnce()).claimed >= options.batchSize }),
    intervalMs: options.pollIntervalMs,
    // The database is down or restarting: claims resume when it answers again.
    onError: (err) => logger.warn({ err }, 'notification round failed'),
  });

  return { runOnce, start: loop.start, stop: loop.stop };
}
/**
 * One attempt through the channel's sender. A channel without a target (or with a stored target
 * that no longer validates) fails for good at once, like an attempt its sender reports as not
 * retriable (a refused target): retrying cannot help until someone changes the target.
 */
async function deliver(
  claim: ClaimedNotification,
  senders: NotificationSenders,
): Promise<{ result: DeliveryResult; final: boolean }> {
  const { channel } = claim;
  if (claim.target === undefined) {
    return {
      result: {
        delivered: false,
        detail: `no ${channel} target is configured for the organization`,
      },
      final: true,
    };
  }
  const notification: OutgoingNotification = {
    idempotencyKey: claim.idempotencyKey,
    payload: claim.payload,
    messageTemplate: claim.messageTemplate,
    tags: claim.tags,
    alertResolvedAt: claim.alertResolvedAt,
    alertValidUntil: claim.alertValidUntil,
  };
  const invalid = (): { result: DeliveryResult; final: boolean } => ({
    result: { delivered: false, detail: `the stored ${channel} target is invalid` },
    final: true,
  });
  try {
    switch (channel) {
      case 'slack': {
        const target = notificationTargetSchemas.slack.safeParse(claim.target);
        if (!target.success) return invalid();
        return outcomeOf(await senders.slack.send(notification, target.data));
      }
      case 'email': {
        const target = notificationTargetSchemas.email.safeParse(claim.target);
        if (!target.success) return invalid();
        return outcomeOf(await senders.email.send(notification, target.data));
      }
      case 'webhook': {
        const target = notificationTargetSchemas.webhook.safeParse(claim.target);
        if (!target.success) return invalid();
        return outcomeOf(await senders.webhook.send(notification, target.data));
      }
      case 'alertmanager': {
        const target = notificationTargetSchemas.alertmanager.safeParse(claim.target);
        if (!target.success) return invalid();
        return outcomeOf(await senders.alertmanager.send(notification, target.data));
      }
    }
  } catch (err) {
    // Senders report failures as results; a throw is a bug, but the attempt still counts.
    const message = err instanceof Error ? err.message : String(err);
    return { result: { delivered: false, detail: `sender error: ${message}` }, final: false };
  }
}

function outcomeOf(result: DeliveryResult): { result: DeliveryResult; final: boolean } {
  return { result, final: result.retriable === false };
}
