import type { AlertmanagerResendStore, RuleAlertResend } from '@monitor/db';
import type { Logger } from '@monitor/platform';
import { createPollLoop } from '@monitor/platform';
import { notificationTargetSchemas, toAlertResponse } from '@monitor/schemas';
import { toAlertmanagerAlert } from './alertmanager-alert.js';
import type { AlertmanagerSender } from './alertmanager-sender.js';
import { validityInResendIntervals } from './alertmanager-sender.js';

export type RuleAlertResenderDeps = {
  store: Pick<AlertmanagerResendStore, 'takeRuleAlertResends'>;
  sender: Pick<AlertmanagerSender, 'post'>;
  logger: Logger;
  /** The console's base URL for `generatorURL`, as the sender of the outbox uses. */
  consoleUrl?: string | undefined;
  nowMs?: () => number;
};

export type RuleAlertResenderOptions = {
  /** How often it looks for re-sends (NOTIFIER_POLL_MS): they go out this late at most. */
  pollIntervalMs: number;
  /** Prometheus' resend delay, for the least validity of a firing alert. */
  resendIntervalMs: number;
  /** Re-sends taken at a time. */
  batchSize: number;
};

/** What one round did. */
type RuleAlertResendRound = { alerts: number; posts: number; failedPosts: number };

export type RuleAlertResender = {
  /** Takes the re-sends due and posts them once (tests, the loop's body). */
  runOnce(): Promise<RuleAlertResendRound>;
  start(): void;
  stop(): Promise<void>;
};

/**
 * Posts again to Alertmanagers the alerts of rule files that their evaluations re-sent, as
 * Prometheus' notifier does after each evaluation: firing alerts every resend delay with their
 * latest annotations and validity, resolved ones for 15 minutes. Each alert goes in its latest
 * state (a firing re-send taken after the alert resolved goes out resolved). Best effort, as in
 * Prometheus: a failed post is not retried, the next re-send makes up for it within the alert's
 * validity; the outbox carries the alert's first firing and its resolution.
 */
export function createRuleAlertResender(
  deps: RuleAlertResenderDeps,
  options: RuleAlertResenderOptions,
): RuleAlertResender {
  const nowMs = deps.nowMs ?? Date.now;
  const { logger } = deps;

  /** Posts one organization's re-sends; true once one of its Alertmanagers took them. */
  async function postOrg(orgId: string, resends: readonly RuleAlertResend[]): Promise<boolean> {
    const target = notificationTargetSchemas.alertmanager.safeParse(resends[0]?.target);
    if (!target.success) {
      logger.warn({ orgId }, 'alertmanager re-send skipped: the stored target is invalid');
      return false;
    }
    const now = nowMs();
    const alerts = resends.map((resend) =>
      toAlertmanagerAlert(
        { transition: 'fired', alert: toAlertResponse(resend.alert) },
        {},
        {
          nowMs: now,
          validForMs: validityInResendIntervals * options.resendIntervalMs,
          consoleUrl: deps.consoleUrl,
          validUntilMs: resend.validUntil?.getTime(),
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

  async function runOnce(): Promise<RuleAlertResendRound> {
    const resends = await deps.store.takeRuleAlertResends(new Date(nowMs()), options.batchSize);
    const byOrg = new Map<string, RuleAlertResend[]>();
    for (const resend of resends) {
      const list = byOrg.get(resend.orgId) ?? [];
      list.push(resend);
      byOrg.set(resend.orgId, list);
    }
    const outcomes = await Promise.all([...byOrg].map(([orgId, list]) => postOrg(orgId, list)));
    const round = {
      alerts: resends.length,
      posts: outcomes.length,
      failedPosts: outcomes.filter((delivered) => !delivered).length,
    };
    if (round.alerts > 0) logger.debug(round, 'rule alert re-send round');
    return round;
  }

  const loop = createPollLoop({
    round: async () => ({ moreWaiting: (await runOnce()).alerts >= options.batchSize }),
    intervalMs: options.pollIntervalMs,
    // The database is down or restarting: re-sends resume when it answers again.
    onError: (err) => logger.warn({ err }, 'rule alert re-send round failed'),
  });

  return { runOnce, start: loop.start, stop: loop.stop };
}
