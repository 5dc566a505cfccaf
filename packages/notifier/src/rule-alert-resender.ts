import type { AlertmanagerResendStore, RuleAlertResend } from '@monitor/db';
import type { Logger } from '@monitor/platform';
import type { AlertmanagerResendLoop } from './alertmanager-resend-loop.js';
import { createAlertmanagerResendLoop } from './alertmanager-resend-loop.js';
import type { AlertmanagerSender } from './alertmanager-sender.js';

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

/** `runOnce` takes the re-sends due and posts them once. */
export type RuleAlertResender = AlertmanagerResendLoop;

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
  /** One batch a round: taking clears them, so a full batch means more are waiting. */
  async function* takeDue(now: Date): AsyncIterable<readonly RuleAlertResend[]> {
    yield await deps.store.takeRuleAlertResends(now, options.batchSize);
  }

  return createAlertmanagerResendLoop(
    {
      takeDue,
      // A rule file's alert goes with its own labels and annotations, not a message.
      describe: (resend) => ({ context: {}, validUntilMs: resend.validUntil?.getTime() }),
      sender: deps.sender,
      logger: deps.logger,
      consoleUrl: deps.consoleUrl,
      nowMs: deps.nowMs,
    },
    {
      name: 'rule alert',
      intervalMs: options.pollIntervalMs,
      resendIntervalMs: options.resendIntervalMs,
      moreWaiting: (round) => round.alerts >= options.batchSize,
    },
  );
}
