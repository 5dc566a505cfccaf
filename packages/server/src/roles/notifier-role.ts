import type { Database } from '@monitor/db';
import { createAlertmanagerResendStore, createNotificationStore } from '@monitor/db';
import {
  createAlertmanagerResender,
  createNotificationSenders,
  createNotifier,
  createNotifierMetrics,
  createRuleAlertResender,
  defaultNotifierOptions,
} from '@monitor/notifier';
import type { NotifierConfig } from '../config.js';
import type { RoleContext } from '../role-context.js';

/**
 * Drains the notification outbox: Slack, email (SMTP_URL), signed webhooks and Alertmanagers,
 * with bounded retries. Replicas share the work through leases on the outbox rows. HTTP targets
 * on internal addresses are refused unless NOTIFIER_ALLOWED_TARGET_NETWORKS allows them. Active
 * alerts of our rules are posted again to Alertmanagers every NOTIFIER_ALERTMANAGER_RESEND_MS;
 * a rule file's alerts when their evaluations re-send them (within NOTIFIER_POLL_MS).
 */
export function startNotifier(ctx: RoleContext, config: NotifierConfig, db: Database): void {
  const senders = createNotificationSenders({
    smtpUrl: config.SMTP_URL,
    httpTimeoutMs: config.NOTIFIER_HTTP_TIMEOUT_MS,
    allowedTargetNetworks: config.NOTIFIER_ALLOWED_TARGET_NETWORKS,
    alertmanagerResendIntervalMs: config.NOTIFIER_ALERTMANAGER_RESEND_MS,
    consoleUrl: config.PUBLIC_URL,
  });
  const resendStore = createAlertmanagerResendStore(db);
  const resender = createAlertmanagerResender(
    {
      store: resendStore,
      sender: senders.alertmanager,
      logger: ctx.logger.child({ component: 'alertmanager-resender' }),
      consoleUrl: config.PUBLIC_URL,
    },
    { resendIntervalMs: config.NOTIFIER_ALERTMANAGER_RESEND_MS, pageSize: 1_000 },
  );
  const ruleAlertResender = createRuleAlertResender(
    {
      store: resendStore,
      sender: senders.alertmanager,
      logger: ctx.logger.child({ component: 'rule-alert-resender' }),
      consoleUrl: config.PUBLIC_URL,
    },
    {
      pollIntervalMs: config.NOTIFIER_POLL_MS,
      resendIntervalMs: config.NOTIFIER_ALERTMANAGER_RESEND_MS,
      batchSize: 1_000,
    },
  );
  const notifier = createNotifier(
    {
      store: createNotificationStore(db),
      senders: senders.senders,
      logger: ctx.logger.child({ component: 'notifier' }),
      metrics: createNotifierMetrics(ctx.metrics.registry),
    },
    {
      ...defaultNotifierOptions,
      pollIntervalMs: config.NOTIFIER_POLL_MS,
      // A lease well above the slowest attempt, so only a dead notifier's rows are taken over.
      leaseMs: Math.max(defaultNotifierOptions.leaseMs, 3 * config.NOTIFIER_HTTP_TIMEOUT_MS),
      retry: {
        ...defaultNotifierOptions.retry,
        baseDelayMs: config.NOTIFIER_RETRY_BASE_MS,
        maxDelayMs: config.NOTIFIER_RETRY_MAX_MS,
        maxAttempts: config.NOTIFIER_MAX_ATTEMPTS,
      },
    },
  );
  notifier.start();
  resender.start();
  ruleAlertResender.start();
  ctx.shutdown.onShutdown('notifier', async () => {
    await Promise.all([notifier.stop(), resender.stop(), ruleAlertResender.stop()]);
    senders.close();
  });
}
