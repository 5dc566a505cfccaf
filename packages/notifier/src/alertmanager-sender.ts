import type { AlertmanagerTarget, AlertNotification } from '@monitor/schemas';
import type { AlertmanagerAlert } from './alertmanager-alert.js';
import { toAlertmanagerAlert } from './alertmanager-alert.js';
import type { HttpPostTransport } from './http-post-transport.js';
import { httpPost } from './http-post.js';
import type {
  DeliveryResult,
  NotificationSender,
  OutgoingNotification,
} from './notification-sender.js';
import { idempotencyKeyHeader } from './notification-sender.js';

export type AlertmanagerSenderOptions = {
  /** `createHttpPostTransport` with the service's address policy, or a fake in unit tests. */
  transport: HttpPostTransport;
  /** How often active alerts are re-sent; a firing alert is valid for 4 × this. */
  resendIntervalMs: number;
  /** The console's base URL for `generatorURL`; none without it. */
  consoleUrl?: string | undefined;
  nowMs?: () => number;
};

export type AlertmanagerSender = NotificationSender<AlertmanagerTarget> & {
  /** Posts alerts already mapped (the re-sends) to the target's Alertmanagers. */
  post(
    alerts: readonly AlertmanagerAlert[],
    target: AlertmanagerTarget,
    headers?: Readonly<Record<string, string>>,
  ): Promise<DeliveryResult>;
};

/** How long Alertmanager holds a firing alert without a re-send, in re-send intervals. */
export const validityInResendIntervals = 4;

/**
 * Posts to `<url>/api/v2/alerts` of every Alertmanager of the target, as Prometheus does: the
 * message is delivered once one of them accepted it (a cluster's peers share it by gossip;
 * an independent one that missed it gets the alert again with the next re-send, and times a
 * missed resolution out at the alert's `endsAt`). Alertmanager merges posts of the same labels,
 * so a post repeated by a retry is harmless.
 */
export function createAlertmanagerSender(options: AlertmanagerSenderOptions): AlertmanagerSender {
  const nowMs = options.nowMs ?? Date.now;

  async function post(
    alerts: readonly AlertmanagerAlert[],
    target: AlertmanagerTarget,
    headers: Readonly<Record<string, string>> = {},
  ): Promise<DeliveryResult> {
    const body = Buffer.from(JSON.stringify(alerts));
    const auth: Record<string, string> =
      target.basic_auth === undefined
        ? {}
        : {
            Authorization: `Basic ${Buffer.from(
              `${target.basic_auth.username}:${target.basic_auth.password}`,
            ).toString('base64')}`,
          };
    const results = await Promise.all(
      target.urls.map((url) =>
        httpPost({
          url: alertsUrl(url),
          body,
          headers: { 'Content-Type': 'application/json', ...auth, ...headers },
          timeoutMs: target.timeout_seconds * 1_000,
          transport: options.transport,
        }),
      ),
    );
    const delivered = results.some((result) => result.delivered);
    const detail =
      results.length === 1
        ? (results[0]?.detail ?? '')
        : results.map((result, i) => `${target.urls[i] ?? ''}: ${result.detail}`).join('; ');
    // Only refusals of every target are final: one that failed otherwise may answer later.
    const refused = results.every((result) => result.retriable === false);
    return delivered ? { delivered, detail } : { delivered, detail, retriable: !refused };
  }

  return {
    send(notification, target) {
      const alert = toAlertmanagerAlert(latestState(notification), notification, {
        nowMs: nowMs(),
        validForMs: validityInResendIntervals * options.resendIntervalMs,
        consoleUrl: options.consoleUrl,
        validUntilMs: notification.alertValidUntil?.getTime(),
      });
      return post([alert], target, { [idempotencyKeyHeader]: notification.idempotencyKey });
    },
    post,
  };
}

/**
 * The message's alert as Alertmanager must see it now: a firing message retried after the alert
 * resolved (its resolution may even have been delivered first) goes out resolved, since
 * Alertmanager keeps the latest post of an alert and a firing one would reopen it.
 */
export function latestState(notification: OutgoingNotification): AlertNotification {
  const { payload, alertResolvedAt } = notification;
  if (
    payload.alert.status !== 'active' ||
    alertResolvedAt === undefined ||
    alertResolvedAt === null
  ) {
    return payload;
  }
  return {
    ...payload,
    alert: { ...payload.alert, status: 'resolved', resolved_at: alertResolvedAt.toISOString() },
  };
}

/** `<url>/api/v2/alerts`, whether or not the base URL ends in a slash or has a path prefix. */
export function alertsUrl(baseUrl: string): string {
  return `${baseUrl.replace(/\/+$/, '')}/api/v2/alerts`;
}
