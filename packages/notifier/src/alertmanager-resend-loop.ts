import type { Logger } from '@monitor/platform';
import { createPollLoop } from '@monitor/platform';
import type { Alert } from '@monitor/schemas';
import { notificationTargetSchemas, toAlertResponse } from '@monitor/schemas';
import type { MessageContext } from './alert-message.js';
import type { AlertmanagerAlert } from './alertmanager-alert.js';
import { toAlertmanagerAlert } from './alertmanager-alert.js';
import type { AlertmanagerSender } from './alertmanager-sender.js';
import { validityInResendIntervals } from './alertmanager-sender.js';

/** One alert to post again to its organization's Alertmanagers. */
export type DueResend = {
  orgId: string;
  alert: Alert;
  /** The organization's `alertmanager` target, as stored (parsed again before each post). */
  target: Readonly<Record<string, unknown>>;
};

/** What one round did. */
type ResendRound = { alerts: number; posts: number; failedPosts: number };

export type AlertmanagerResendLoopDeps<Resend extends DueResend> = {
  /**
   * The re-sends due at `now`, a page at a time: each page is posted before the next is asked
   * for, and the round ends with the last page.
   */
  takeDue(now: Date): AsyncIterable<readonly Resend[]>;
  /** How `resend` goes out: its message's context and a validity it carries of its own. */
  describe(resend: Resend): { context: MessageContext; validUntilMs?: number | undefined };
  sender: Pick<AlertmanagerSender, 'post'>;
  logger: Logger;
  /** The console's base URL for `generatorURL`, as the sender of the outbox uses. */
  consoleUrl?: string | undefined;
  nowMs?: (() => number) | undefined;
};

export type AlertmanagerResendLoopOptions = {
  /** Names the round's log lines: `<name> re-send round` and `<name> re-send round failed`. */
  name: string;
  /** How often a round runs. */
  intervalMs: number;
  /** Prometheus' resend delay, for the least validity of a firing alert. */
  resendIntervalMs: number;
  /** Whether the round left re-sends due, so the next one runs at once. */
  moreWaiting(round: ResendRound): boolean;
};

export type AlertmanagerResendLoop = {
  /** Posts the re-sends due once (tests, the loop's body). */
  runOnce(): Promise<ResendRound>;
  start(): void;
  stop(): Promise<void>;
};

/**
 * The loop both re-senders share: take what is due, post it to each organization's
 * Alertmanagers in one POST per organization and page, count what went out. Best effort, not
 * through the outbox: a failed post is not retried, the next re-send makes up for it within the
 * alerts' validity.
 */
export function createAlertmanagerResendLoop<Resend extends DueResend>(
  deps: AlertmanagerResendLoopDeps<Resend>,
  options: AlertmanagerResendLoopOptions,
): AlertmanagerResendLoop {
  const nowMs = deps.nowMs ?? Date.now;
  const { logger } = deps;

  /** Posts one organization's re-sends; true once one of its Alertmanagers took them. */
  async function postOrg(orgId: string, resends: readonly Resend[]): Promise<boolean> {
    // Every re-send of an organization carries the same target.
    const target = notificationTargetSchemas.alertmanager.safeParse(resends[0]?.target);
    if (!target.success) {
      logger.warn({ orgId }, 'alertmanager re-send skipped: the stored target is invalid');
      return false;
    }
    const now = nowMs();
    const alerts: AlertmanagerAlert[] = resends.map((resend) => {
      const { context, validUntilMs } = deps.describe(resend);
      return toAlertmanagerAlert(
        { transition: 'fired', alert: toAlertResponse(resend.alert) },
        context,
        {
          nowMs: now,
          validForMs: validityInResendIntervals * options.resendIntervalMs,
          consoleUrl: deps.consoleUrl,
          validUntilMs,
        },
      );
    });
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
    for await (const page of deps.takeDue(new Date(nowMs()))) {
      round.alerts += page.length;
      const byOrg = new Map<string, Resend[]>();
      for (const resend of page) {
        const list = byOrg.get(resend.orgId) ?? [];
        list.push(resend);
        byOrg.set(resend.orgId, list);
      }
      const outcomes = await Promise.all([...byOrg].map(([orgId, list]) => postOrg(orgId, list)));
      round.posts += outcomes.length;
      round.failedPosts += outcomes.filter((delivered) => !delivered).length;
    }
    if (round.alerts > 0) logger.debug(round, `${options.name} re-send round`);
    return round;
  }

  const loop = createPollLoop({
    round: async () => ({ moreWaiting: options.moreWaiting(await runOnce()) }),
    intervalMs: options.intervalMs,
    // The database is down or restarting: re-sends resume when it answers again.
    onError: (err) => logger.warn({ err }, `${options.name} re-send round failed`),
  });

  return { runOnce, start: loop.start, stop: loop.stop };
}
