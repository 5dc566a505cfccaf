import type { SlackTarget } from '@monitor/schemas';
import { formatSlackText } from './alert-message.js';
import type { HttpSenderOptions } from './http-post.js';
import { httpPost } from './http-post.js';
import type { NotificationSender } from './notification-sender.js';
import { idempotencyKeyHeader } from './notification-sender.js';

/** Posts `{ "text" }` to a Slack incoming webhook; Slack answers 200 `ok`. */
export function createSlackSender(options: HttpSenderOptions): NotificationSender<SlackTarget> {
  return {
    send(notification, target) {
      const body = Buffer.from(
        JSON.stringify({ text: formatSlackText(notification.payload, notification) }),
      );
      return httpPost({
        url: target.webhook_url,
        body,
        headers: {
          'Content-Type': 'application/json',
          [idempotencyKeyHeader]: notification.idempotencyKey,
        },
        timeoutMs: options.timeoutMs,
        transport: options.transport,
      });
    },
  };
}
