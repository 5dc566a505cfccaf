import type { WebhookTarget } from '@monitor/schemas';
import { renderAlertTemplate } from './alert-message.js';
import type { HttpSenderOptions } from './http-post.js';
import { httpPost } from './http-post.js';
import type { NotificationSender } from './notification-sender.js';
import { idempotencyKeyHeader } from './notification-sender.js';
import { signWebhookBody, signatureHeader, timestampHeader } from './webhook-signature.js';

/**
 * POSTs the notification payload (`{ "transition", "alert" }`, plus `"message"`, the rule's
 * `message_template` rendered, when the rule has one) as JSON, signed: the signature header is
 * HMAC-SHA256 under the target's secret of `<timestamp>.<the exact body bytes>`.
 */
export function createWebhookSender(
  options: HttpSenderOptions & { nowMs?: () => number },
): NotificationSender<WebhookTarget> {
  const nowMs = options.nowMs ?? Date.now;
  return {
    send(notification, target) {
      const message = renderAlertTemplate(notification.payload, notification);
      const body = Buffer.from(
        JSON.stringify(
          message === undefined ? notification.payload : { ...notification.payload, message },
        ),
      );
      const timestamp = String(Math.floor(nowMs() / 1000));
      return httpPost({
        url: target.url,
        body,
        headers: {
          'Content-Type': 'application/json',
          [idempotencyKeyHeader]: notification.idempotencyKey,
          [timestampHeader]: timestamp,
          [signatureHeader]: signWebhookBody(target.secret, timestamp, body),
        },
        timeoutMs: options.timeoutMs,
        transport: options.transport,
      });
    },
  };
}
