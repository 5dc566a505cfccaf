import type { AlertmanagerResend, AlertmanagerResendStore } from '@monitor/db';
import type { Logger } from '@monitor/platform';
import { createPollLoop } from '@monitor/platform';
import { notificationTargetSchemas, toAlertResponse } from '@monitor/schemas';
import type { AlertmanagerAlert } from './alertmanager-alert.js';
import { toAlertmanagerAlert } from './alertmanager-alert.js';
import type { AlertmanagerSender } from './alertmanager-sender.js';
import { validityInResendIntervals } from './alertmanager-sender.js';

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

/** What one round did. */
type ResendRound = { alerts: number; posts: number; failedPosts: number };

export type AlertmanagerResender = {
  /** Posts every active alert to its organization's Alertmanagers once (tests, the loop's body). */
  runOnce(): Promise<ResendRound>;
  start(): void;
  stop(): Promise<void>;
};

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
  const nowMs = deps.nowMs ?? Date.now;
  const { logger } = deps;

  /** Posts one organization's alerts (of one page); true once one Alertmanager took them. */
  async function postOrg(orgId: string, resends: readonly AlertmanagerResend[]): Promise<boolean> {
    // Every row of an organization carries the same target.
    const target = notificationTargetSchemas.alertmanager.safeParse(resends[0]?.target);
    if (!target.success) {
      logger.warn({ orgId }, 'alertmanager re-send skipped: the stored target is invalid');
      return false;
    }
    const now = nowMs();
    const alerts: AlertmanagerAlert[] = resends.map((resend) =>
      toAlertmanagerAlert(
        { transition: 'fired', alert: toAlertResponse(resend.alert) },
        { messageTemplate: resend.messageTemplate, tags: resend.tags },
        {
          nowMs: now,
          validForMs: validityInResendIntervals * options.resendIntervalMs,
          consoleUrl: deps.consoleUrl,
        },
      ),
    );
    const result = await deps.sender.post(alerts, target.data);
    if (!result.delivered) {
      logger.warn(
        { orgId, alerts: alerts.length, detail: result.detail },
        'alertmanager re-send failed; the next one follows within the alerts’ validity',
      );
    }
    return result.delivered;
  }

  async function runOnce(): Promise<ResendRound> {
    const round: ResendRound = { alerts: 0, posts: 0, failedPosts: 0 };
    const now = new Date(nowMs());
    let after: { orgId: string; alertId: string } | undefined;
    for (;;) {
      const page = await deps.store.listResends(now, {
        limit: options.pageSize,
        ...(after === undefined ? {} : { after }),
      });
      round.alerts += page.length;
      const byOrg = new Map<string, AlertmanagerResend[]>();
      for (const resend of page) {
        const list = byOrg.get(resend.orgId) ?? [];
        list.push(resend);
        byOrg.set(resend.orgId, list);
      }
      const outcomes = await Promise.all(
        [...byOrg].map(([orgId, resends]) => postOrg(orgId, resends)),
      );
      round.posts += outcomes.length;
      round.failedPosts += outcomes.filter((delivered) => !delivered).length;
      const last = page.at(-1);
      if (last === undefined || page.length < options.pageSize) break;
      after = { orgId: last.orgId, alertId: last.alert.id };
    }
    if (round.alerts > 0) logger.debug(round, 'alertmanager re-send round');
    return round;
  }

  const loop = createPollLoop({
    round: async () => {
      await runOnce();
      return { moreWaiting: false };
    },
    intervalMs: options.resendIntervalMs,
    // The database is down or restarting: re-sends resume when it answers again.
    onError: (err) => logger.warn({ err }, 'alertmanager re-send round failed'),
  });

  return { runOnce, start: loop.start, stop: loop.stop };
}
