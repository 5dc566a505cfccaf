import type { EmailTarget } from '@monitor/schemas';
import type { AlertmanagerSender } from './alertmanager-sender.js';
import { createAlertmanagerSender } from './alertmanager-sender.js';
import { createEmailSender, createSmtpTransport } from './email-sender.js';
import { createHttpPostTransport } from './http-post-transport.js';
import type { NotificationSender, NotificationSenders } from './notification-sender.js';
import { createSlackSender } from './slack-sender.js';
import { createTargetAddressPolicy } from '@monitor/platform';
import { createWebhookSender } from './webhook-sender.js';

export type NotificationSendersOptions = {
  /** The SMTP server of every email (`smtp://host:port`); without one, emails fail visibly. */
  smtpUrl: string | undefined;
  /** Bounds each Slack and webhook POST (default 10 s; an Alertmanager target has its own). */
  httpTimeoutMs?: number;
  /**
   * Networks (CIDRs) that Slack, webhook and Alertmanager targets may reach although they are internal
   * (loopback, private, link-local…); none by default, since tenants choose the targets.
   */
  allowedTargetNetworks?: readonly string[];
  /** Bounds each SMTP wait: connect, greeting, every reply (default 15 s). */
  smtpTimeoutMs?: number;
  /** How often active alerts are re-sent to Alertmanagers (default 1 minute, as Prometheus). */
  alertmanagerResendIntervalMs?: number;
  /** The console's base URL, the `generatorURL` of Alertmanager alerts; none without it. */
  consoleUrl?: string | undefined;
};

/** Prometheus' `--rules.alert.resend-delay` default. */
const defaultAlertmanagerResendIntervalMs = 60_000;

/** The production senders, and `close` for the SMTP transport (call it after the notifier stopped). */
export function createNotificationSenders(options: NotificationSendersOptions): {
  senders: NotificationSenders;
  /** The same Alertmanager sender, for the re-sends of active alerts. */
  alertmanager: AlertmanagerSender;
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
  const alertmanager = createAlertmanagerSender({
    transport,
    resendIntervalMs: options.alertmanagerResendIntervalMs ?? defaultAlertmanagerResendIntervalMs,
    consoleUrl: options.consoleUrl,
  });
  return {
    alertmanager,
    senders: {
      slack: createSlackSender({ timeoutMs, transport }),
      email: smtp === undefined ? unconfiguredEmail : createEmailSender(smtp),
      webhook: createWebhookSender({ timeoutMs, transport }),
      alertmanager,
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
