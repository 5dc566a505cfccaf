import { Counter } from 'prom-client';
import type { Registry } from 'prom-client';
import type { NotifierMetrics } from './notifier.js';

/** Deliveries and failed attempts per channel, in `registry`. */
export function createNotifierMetrics(registry: Registry): NotifierMetrics {
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
