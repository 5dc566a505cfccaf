import type { Database } from '@monitor/db';
import { createNotificationStore } from '@monitor/db';
import {
  createNotificationSenders,
  createNotifier,
  createNotifierMetrics,
  defaultNotifierOptions,
} from '@monitor/notifier';
import type { NotifierConfig } from '../config.js';
import type { RoleContext } from '../role-context.js';

/**
 * Drains the notification outbox: Slack, email (SMTP_URL) and signed webhooks, with bounded
 * retries. Replicas share the work through leases on the outbox rows. Slack and webhook targets
 * on internal addresses are refused unless NOTIFIER_ALLOWED_TARGET_NETWORKS allows them.
 */
export function startNotifier(ctx: RoleContext, config: NotifierConfig, db: Database): void {
  const senders = createNotificationSenders({
    smtpUrl: config.SMTP_URL,
    httpTimeoutMs: config.NOTIFIER_HTTP_TIMEOUT_MS,
    allowedTargetNetworks: config.NOTIFIER_ALLOWED_TARGET_NETWORKS,
  });
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
  ctx.shutdown.onShutdown('notifier', async () => {
    await notifier.stop();
    senders.close();
  });
}
