import type { EmailTarget } from '@monitor/schemas';
import { createEmailSender, createSmtpTransport } from './email-sender.js';
import { createHttpPostTransport } from './http-post-transport.js';
import type { NotificationSender, NotificationSenders } from './notification-sender.js';
import { createSlackSender } from './slack-sender.js';
import { createTargetAddressPolicy } from '@monitor/platform';
import { createWebhookSender } from './webhook-sender.js';

export type NotificationSendersOptions = {
  /** The SMTP server of every email (`smtp://host:port`); without one, emails fail visibly. */
  smtpUrl: string | undefined;
  /** Bounds each Slack and webhook POST (default 10 s). */
  httpTimeoutMs?: number;
  /**
   * Networks (CIDRs) that Slack and webhook targets may reach although they are internal
   * (loopback, private, link-local…); none by default, since tenants choose the targets.
   */
  allowedTargetNetworks?: readonly string[];
  /** Bounds each SMTP wait: connect, greeting, every reply (default 15 s). */
  smtpTimeoutMs?: number;
};

/** The production senders, and `close` for the SMTP transport (call it after the notifier stopped). */
export function createNotificationSenders(options: NotificationSendersOptions): {
  senders: NotificationSenders;
  close(): void;
} {
  const timeoutMs = options.httpTimeoutMs ?? 10_000;
  const transport = createHttpPostTransport(
    createTargetAddressPolicy(options.allowedTargetNetworks ?? []),
  );
  const smtp =
    options.smtpUrl === undefined
      ? undefined
      : createSmtpTransport({
          smtpUrl: options.smtpUrl,
          timeoutMs: options.smtpTimeoutMs ?? 15_000,
        });
  return {
    senders: {
      slack: createSlackSender({ timeoutMs, transport }),
      email: smtp === undefined ? unconfiguredEmail : createEmailSender(smtp),
      webhook: createWebhookSender({ timeoutMs, transport }),
    },
    close() {
      smtp?.close();
    },
  };
}

const unconfiguredEmail: NotificationSender<EmailTarget> = {
  send: () =>
    Promise.resolve({ delivered: false, detail: 'no SMTP server is configured for the service' }),
};
