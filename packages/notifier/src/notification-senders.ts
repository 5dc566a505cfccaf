import type { EmailTarget } from '@monitor/schemas';
import { createEmailSender, createSmtpTransport } from './email-sender.js';
import type { NotificationSender, NotificationSenders } from './notification-sender.js';
import { createSlackSender } from './slack-sender.js';
import { createWebhookSender } from './webhook-sender.js';

export type NotificationSendersOptions = {
  /** The SMTP server of every email (`smtp://host:port`); without one, emails fail visibly. */
  smtpUrl: string | undefined;
  /** Bounds each Slack and webhook POST (default 10 s). */
  httpTimeoutMs?: number;
  /** Bounds each SMTP wait: connect, greeting, every reply (default 15 s). */
  smtpTimeoutMs?: number;
};

/** The production senders, and `close` for the SMTP transport (call it after the notifier stopped). */
export function createNotificationSenders(options: NotificationSendersOptions): {
  senders: NotificationSenders;
  close(): void;
} {
  const timeoutMs = options.httpTimeoutMs ?? 10_000;
  const transport =
    options.smtpUrl === undefined
      ? undefined
      : createSmtpTransport({
          smtpUrl: options.smtpUrl,
          timeoutMs: options.smtpTimeoutMs ?? 15_000,
        });
  return {
    senders: {
      slack: createSlackSender({ timeoutMs }),
      email: transport === undefined ? unconfiguredEmail : createEmailSender(transport),
      webhook: createWebhookSender({ timeoutMs }),
    },
    close() {
      transport?.close();
    },
  };
}

const unconfiguredEmail: NotificationSender<EmailTarget> = {
  send: () =>
    Promise.resolve({ delivered: false, detail: 'no SMTP server is configured for the service' }),
};
