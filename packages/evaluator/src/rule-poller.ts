import type { LiveRuleSnapshot } from '@monitor/db';
import type { RuleSet } from './rule-set.js';
import { createRuleSet } from './rule-set.js';

export type RuleSetChange = {
  rules: RuleSet;
  /** Rules that were live before and are not now (deleted or disabled), or restarted. */
  removedRuleIds: string[];
};

export type RulePollerOptions = {
  /** A value that changes with every committed rule change; read before `load`. */
  fingerprint(): Promise<string>;
  /** Every live rule, with the epoch of the snapshot. */
  load(): Promise<LiveRuleSnapshot>;
  /** Time between two checks of the fingerprint. */
  intervalMs: number;
  /** A failed check (the poller keeps the current set and tries again next interval). Must not throw. */
  onError(err: unknown): void;
  /** Called after each reload that changed the set, before the next check. Must not throw. */
  onChange?(change: RuleSetChange): void;
};

export type RulePoller = {
  /** The current rule set (empty before `start`). */
  current(): RuleSet;
  /** Loads the rules once (rejects when that fails), then checks every `intervalMs`. */
  start(): Promise<void>;
  /** Checks the fingerprint now and reloads when it changed; rejects when the check fails. */
  poll(): Promise<void>;
  /**
   * Resolves once a check that started after this call succeeded: every rule change committed
   * before the call is then in `current()`. Callers waiting together share one check. Rejects
   * when the check fails.
   */
  refresh(): Promise<void>;
  /** Stops checking; resolves once a check in progress finished. Idempotent. */
  stop(): Promise<void>;
};

/**
 * Keeps every replica's rule set within about one interval of the database: a cheap fingerprint
 * query each interval, the full set only when it changed. `refresh` lets the evaluator make sure,
 * before it evaluates records, that it knows every rule change answered before they arrived
 * (one check serves every batch waiting for it).
 */
export function createRulePoller(options: RulePollerOptions): RulePoller {
  let rules = createRuleSet({ rules: [], epoch: 0 });
  let fingerprint: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  /** Checks run one at a time, numbered in the order they start. */
  let inFlight: { seq: number; done: Promise<void> } | undefined;
  let checksStarted = 0;
  let lastSucceeded = 0;
  let stopped = false;

  async function check(): Promise<void> {
    // Read first: a change committed between the two reads shows up again next time.
    const next = await options.fingerprint();
    if (next === fingerprint) return;
    const loaded = createRuleSet(await options.load());
    // A rule whose evaluation restarted (a new generation) loses its windows like a removed one.
    const removedRuleIds = [...rules.ruleIds].filter(
      (id) => loaded.generationOf(id) !== rules.generationOf(id),
    );
    rules = loaded;
    fingerprint = next;
    options.onChange?.({ rules, removedRuleIds });
  }

  function poll(): Promise<void> {
    if (inFlight === undefined) {
      const seq = ++checksStarted;
      const done = check()
        .then(() => {
          lastSucceeded = Math.max(lastSucceeded, seq);
        })
        .finally(() => (inFlight = undefined));
      inFlight = { seq, done };
    }
    return inFlight.done;
  }

  async function refresh(): Promise<void> {
    // A check in flight now started before this call and may have read the rules too early.
    const needed = checksStarted + 1;
    while (lastSucceeded < needed) {
      const running = inFlight;
      if (running !== undefined && running.seq < needed) {
        await running.done.catch(() => undefined);
        continue;
      }
      await poll();
    }
  }

  function schedule(): void {
    if (stopped) return;
    timer = setTimeout(() => {
      void poll()
        .catch((err: unknown) => options.onError(err))
        .finally(schedule);
    }, options.intervalMs);
    // The poller alone must not keep a process alive that is shutting down.
    timer.unref();
  }

  return {
    current: () => rules,
    async start() {
      await poll();
      schedule();
    },
    poll,
    refresh,
    async stop() {
      stopped = true;
      clearTimeout(timer);
      await inFlight?.done.catch(() => undefined);
    },
  };
}
