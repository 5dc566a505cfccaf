import type { AlertmanagerResend, AlertmanagerResendStore } from '@monitor/db';
import type { Logger } from '@monitor/platform';
import type { AlertmanagerResendLoop } from './alertmanager-resend-loop.js';
import { createAlertmanagerResendLoop } from './alertmanager-resend-loop.js';
import type { AlertmanagerSender } from './alertmanager-sender.js';

export type AlertmanagerResenderDeps = {
  store: Pick<AlertmanagerResendStore, 'listResends'>;
  sender: Pick<AlertmanagerSender, 'post'>;
  logger: Logger;
  /** The console's base URL for `generatorURL`, as the sender of the outbox uses. */
  consoleUrl?: string | undefined;
  nowMs?: () => number;
};

export type AlertmanagerResenderOptions = {
  /** Prometheus' resend delay: every active alert is posted again this often. */
  resendIntervalMs: number;
  /** Alerts read (and posted, per organization) at a time. */
  pageSize: number;
};

/** `runOnce` posts every active alert to its organization's Alertmanagers once. */
export type AlertmanagerResender = AlertmanagerResendLoop;

/**
 * Keeps firing alerts firing in Alertmanager: Alertmanager resolves an alert at its `endsAt`
 * unless it hears of it again, and keeps alerts in memory only, so a restarted one knows
 * nothing until the next re-send. Like Prometheus (`--rules.alert.resend-delay`), every active
 * alert goes out again each interval with `endsAt` moved ahead. Best effort, not through the
 * outbox: a lost re-send is made good by the next one within the alert's validity (4
 * intervals). Every notifier replica re-sends; Alertmanager merges the duplicates.
 */
export function createAlertmanagerResender(
  deps: AlertmanagerResenderDeps,
  options: AlertmanagerResenderOptions,
): AlertmanagerResender {
  /** Every active alert, page by page in (organization, alert id) order. */
  async function* takeDue(now: Date): AsyncIterable<readonly AlertmanagerResend[]> {
    let after: { orgId: string; alertId: string } | undefined;
    for (;;) {
      const page = await deps.store.listResends(now, {
        limit: options.pageSize,
        ...(after === undefined ? {} : { after }),
      });
      yield page;
      const last = page.at(-1);
      if (last === undefined || page.length < options.pageSize) return;
      after = { orgId: last.orgId, alertId: last.alert.id };
    }
  }

  return createAlertmanagerResendLoop(
    {
      takeDue,
      describe: (resend) => ({
        context: { messageTemplate: resend.messageTemplate, tags: resend.tags },
      }),
      sender: deps.sender,
      logger: deps.logger,
      consoleUrl: deps.consoleUrl,
      nowMs: deps.nowMs,
    },
    {
      name: 'alertmanager',
      intervalMs: options.resendIntervalMs,
      resendIntervalMs: options.resendIntervalMs,
      // A round reads every page: nothing is left for an early next one.
      moreWaiting: () => false,
    },
  );
}
