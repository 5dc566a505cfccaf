import type { ClaimOptions, ClaimedInvestigation, InvestigationStore } from '@monitor/db';
import type { Logger } from '@monitor/platform';
import { createPollLoop, isRetriable } from '@monitor/platform';
import type { AnalyzeOptions } from './analyze-incident.js';
import { focusMetricOf } from './gather-evidence.js';
import type { Verdict } from './incident-evidence.js';
import { analyzeIncident, defaultPeerTagKeys } from './analyze-incident.js';
import { toAlertFacts, toIncidentInput, toSeries } from './evidence-to-input.js';
import { incidentWindows } from './incident-input.js';
import type { Narrator } from './narrator.js';

export type InvestigatorMetrics = {
  /** One investigation left this worker's hands, and how long it took. */
  investigationFinished(outcome: RunStatus, durationMs: number): void;
  /** The narrator was asked and rewrote the text (`rewritten`) or the computed text was kept. */
  narrated(outcome: 'rewritten' | 'failed'): void;
};

export type InvestigatorDeps = {
  store: InvestigationStore;
  /** An LLM that rewrites the wording; without one nothing is called. */
  narrator?: Narrator;
  clock: { now(): Date };
  logger: Logger;
  metrics: InvestigatorMetrics;
};

export type InvestigatorOptions = {
  /** Wait between polls while nothing is claimable (default 2000). */
  pollIntervalMs?: number;
  /**
   * How long a claim holds (default 120 s); renewed every third of it while the investigation is
   * in hand, so only a worker that died or stalls loses it.
   */
  leaseMs?: number;
  /** Attempts before a transient failure, or a crashed worker's lease, fails for good (default 3). */
  maxAttempts?: number;
  /** Delay before a retry; doubles with each attempt (default 15 s). */
  retryDelayMs?: number;
  /** Baseline length before the incident window (default 60 min). */
  baselineMinutes?: number;
  /** How far before the first breaching sample the incident window opens (default 10 min). */
  leadMinutes?: number;
  peerTagKeys?: readonly string[];
  /** At most this many peers are read (default 50). */
  maxPeers?: number;
  inconclusiveBelow?: number;
  /** Wait, before analysing, until storage holds what the evaluators saw (see ClaimOptions). */
  evidence?: ClaimOptions['evidence'];
};

type RunStatus = 'completed' | 'retried' | 'failed' | 'lost';

type RunOutcome =
  { status: 'idle' } | { status: RunStatus; investigationId: string; verdict?: Verdict };

export type Investigator = {
  /** Claims and finishes at most one investigation. Rejects only when claiming itself fails. */
  runOnce(): Promise<RunOutcome>;
  /** Starts the poll loop (idempotent). */
  start(): void;
  /** Stops polling and resolves once the investigation in hand, if any, is finished. */
  stop(): Promise<void>;
};

const hourMs = 3_600_000;

/**
 * The investigator role's worker: claims queued investigations (safe across replicas), reads
 * their evidence, runs the engine, lets the narrator reword the result when one is configured,
 * and stores it. Transient failures go back to the queue with a growing delay; others fail the
 * investigation with the error.
 */
export function createInvestigator(
  deps: InvestigatorDeps,
  options: InvestigatorOptions = {},
): Investigator {
  const pollIntervalMs = options.pollIntervalMs ?? 2000;
  const leaseMs = options.leaseMs ?? 120_000;
  const maxAttempts = options.maxAttempts ?? 3;
  const retryDelayMs = options.retryDelayMs ?? 15_000;
  const maxPeers = options.maxPeers ?? 50;
  const peerTagKeys = options.peerTagKeys ?? defaultPeerTagKeys;
  const log = deps.logger;
  const analyzeOptions: AnalyzeOptions = {
    peerTagKeys,
    ...(options.inconclusiveBelow === undefined
      ? {}
      : { inconclusiveBelow: options.inconclusiveBelow }),
  };

  async function investigate(
    claim: ClaimedInvestigation,
  ): Promise<Exclude<RunOutcome, { status: 'idle' }>> {
    const windows = incidentWindows(claim.windowFrom.getTime(), claim.windowTo.getTime(), {
      ...(options.baselineMinutes === undefined
        ? {}
        : { baselineMinutes: options.baselineMinutes }),
      ...(options.leadMinutes === undefined ? {} : { leadMinutes: options.leadMinutes }),
    });
    const evidence = await deps.store.loadEvidence({
      orgId: claim.orgId,
      serviceId: claim.serviceId,
      alertId: claim.alertId,
      from: new Date(windows.baseline.fromMs),
      incidentFrom: new Date(windows.incident.fromMs),
      to: new Date(windows.incident.toMs),
      historyFrom: new Date(windows.incident.toMs - 24 * hourMs),
      peerTagKeys,
      maxPeers,
      // The analysis compares the peers on its focus metric alone: reading more is waste.
      choosePeerMetrics: ({ alert, samples }) => [
        focusMetricOf({
          ...(alert === undefined ? {} : { alert: toAlertFacts(alert) }),
          windows,
          series: toSeries(samples),
        }),
      ],
    });
    const analysis = analyzeIncident(toIncidentInput(evidence, windows), analyzeOptions);
    let report = analysis.report;
    if (deps.narrator !== undefined) {
      const narrated = await deps.narrator.narrate(report);
      deps.metrics.narrated(narrated.outcome);
      report = narrated.report;
    }
    const stored = await deps.store.complete(claim, report);
    return {
      status: stored ? 'completed' : 'lost',
      investigationId: claim.id,
      verdict: analysis.verdict,
    };
  }

  /**
   * Renews the claim's lease every third of it until stopped, so a long load or a slow narrator
   * never lets another replica take over a live investigation. A failed renewal is retried at
   * the next tick (two chances before the lease runs out); a lost claim stops the renewals, and
   * `complete` then reports it lost.
   */
  function keepLease(claim: ClaimedInvestigation): { stop(): Promise<void> } {
    let stopped = false;
    let timer: NodeJS.Timeout | undefined;
    let inFlight: Promise<void> = Promise.resolve();
    const schedule = () => {
      timer = setTimeout(() => {
        inFlight = deps.store.renew(claim, leaseMs).then(
          (held) => {
            if (!held) {
              if (!stopped) log.warn({ investigationId: claim.id }, 'investigation lease lost');
              return;
            }
            if (!stopped) schedule();
          },
          (err: unknown) => {
            log.warn({ err, investigationId: claim.id }, 'could not renew an investigation lease');
            if (!stopped) schedule();
          },
        );
      }, leaseMs / 3);
    };
    schedule();
    return {
      async stop() {
        stopped = true;
        clearTimeout(timer);
        await inFlight;
      },
    };
  }

  async function runOnce(): Promise<RunOutcome> {
    const claim = await deps.store.claim({
      leaseMs,
      maxAttempts,
      ...(options.evidence === undefined ? {} : { evidence: options.evidence }),
    });
    if (claim === undefined) return { status: 'idle' };
    const startedMs = deps.clock.now().getTime();
    const renewal = keepLease(claim);
    let outcome: Exclude<RunOutcome, { status: 'idle' }>;
    try {
      outcome = await investigate(claim);
    } catch (err) {
      const retriable = isRetriable(err);
      const status = await deps.store
        .fail(claim, {
          error: err instanceof Error ? err.message : String(err),
          retriable,
          retryDelayMs: retryDelayMs * 2 ** (claim.attempts - 1),
          maxAttempts,
        })
        .catch((failErr: unknown) => {
          // The lease expires and another attempt follows: nothing is lost.
          log.warn(
            { err: failErr, investigationId: claim.id },
            'could not record a failed investigation',
          );
          return 'lost' as const;
        });
      outcome = {
        status: status === 'queued' ? 'retried' : status,
        investigationId: claim.id,
      };
      const level = outcome.status === 'failed' ? 'error' : 'warn';
      log[level](
        { err, investigationId: claim.id, attempts: claim.attempts, outcome: outcome.status },
        'investigation failed',
      );
    } finally {
      await renewal.stop();
    }
    const durationMs = deps.clock.now().getTime() - startedMs;
    deps.metrics.investigationFinished(outcome.status, durationMs);
    if (outcome.status === 'completed' || outcome.status === 'lost') {
      log.info(
        {
          investigationId: claim.id,
          outcome: outcome.status,
          cause: outcome.verdict?.kind,
          subject: outcome.verdict?.subject,
          confidence: outcome.verdict?.confidence,
          durationMs,
        },
        'investigation finished',
      );
    }
    return outcome;
  }

  const loop = createPollLoop({
    round: async () => ({ moreWaiting: (await runOnce()).status !== 'idle' }),
    intervalMs: pollIntervalMs,
    onError: (err) => log.warn({ err }, 'claiming investigations failed; retrying'),
  });

  return { runOnce, start: loop.start, stop: loop.stop };
}
