import type { Database } from '@monitor/db';
import { createNotificationStore } from '@monitor/db';
import type { NotifierMetrics } from '@monitor/notifier';
import {
  createNotificationSenders,
  createNotifier,
  defaultNotifierOptions,
} from '@monitor/notifier';
import { Counter } from 'prom-client';
import type { Registry } from 'prom-client';
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

function createNotifierMetrics(registry: Registry): NotifierMetrics {
  const sent = new Counter({
    name: 'notifications_sent_total',
    help: 'Notification messages delivered, by channel.',
    labelNames: ['channel'],
    registers: [registry],
  });
  const failed = new Counter({
    name: 'notifications_failed_total',
    help: 'Failed delivery attempts, by channel; final="true" when no retry follows.',
    labelNames: ['channel', 'final'],
    registers: [registry],
  });
  return {
    sent: (channel) => sent.inc({ channel }),
    failed: (channel, final) => failed.inc({ channel, final: String(final) }),
  };
}
