import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { setTimeout as sleep } from 'node:timers/promises';
import { countSamples } from '@monitor/db/bench';
import type { BenchProcess } from './bench-process.js';
import { logProgress } from './harness/progress.js';
import { waitForAcknowledged, startProbedLoad } from './failover-load.js';
import { createProbeRules, probeHosts } from './failover-probe-http.js';
import { joinsAfter } from './failover-joins.js';
import type { FailoverEvent } from './failover-report.js';
import type { FailoverContext, FailoverTarget } from './failover-target.js';
import { waitForRulesLoaded } from './rules-api.js';

/**
 * The roles scenario of `bench:failover`: two writers and two evaluators under the probed load,
 * then the events one after the other, each followed by its observation window (see
 * failover-bench.ts).
 */

/** The target: back under the threshold within 10 s of a replica going away. */
export const targetStallMs = 10_000;

type EventOptions = {
  /** What adding a replica costs: reported, no target of its own (issue 28 sets none). */
  informative?: boolean;
  /** The replica started to join during the stall: when it joined is reported. */
  joiner?: string;
  /** Runs before the event's time is taken (starting the joiner). */
  prepare?: () => Promise<void>;
};

type PendingEvent = EventOptions & {
  name: string;
  role: 'writer' | 'evaluator';
  atMs: number;
  atWallMs: number;
};

export async function measureRoleFailover(
  { stack, headers, partitions }: FailoverTarget,
  { options, report, processes }: FailoverContext,
): Promise<void> {
  const topic = stack.env['SAMPLES_TOPIC'] ?? '';
  // The consumers log their group joins (info), which the report reads back.
  const consumer = (role: 'writer' | 'evaluator', name: string): Promise<BenchProcess> =>
    stack.startRole(role, { name, extraEnv: { LOG_LEVEL: 'info' } }).then((proc) => {
      processes.push(proc);
      return proc;
    });
  logProgress('starting gateway, api, two writers and two evaluators');
  const [gateway, api] = await stack.startRoles(['gateway', 'api'], processes);
  const [writerA, writerB, evaluatorA, evaluatorB] = await Promise.all([
    consumer('writer', 'writer-a'),
    consumer('writer', 'writer-b'),
    consumer('evaluator', 'evaluator-a'),
    consumer('evaluator', 'evaluator-b'),
  ]);

  const hosts = probeHosts(partitions);
  const ruleIds = await createProbeRules(api.baseUrl, headers, hosts);
  await Promise.all(
    [evaluatorA, evaluatorB].map((proc) => waitForRulesLoaded(proc.baseUrl, ruleIds.length)),
  );

  const probed = startProbedLoad(
    options,
    { gatewayBaseUrl: gateway.baseUrl, apiBaseUrl: api.baseUrl, headers },
    { hosts, ruleIds },
  );
  await probed.waitOutBaseline();

  const pending: PendingEvent[] = [];
  const observe = async (
    name: string,
    role: 'writer' | 'evaluator',
    act: () => Promise<void>,
    eventOptions: EventOptions = {},
  ): Promise<void> => {
    await eventOptions.prepare?.();
    logProgress(name);
    const event = { name, role, atMs: performance.now(), atWallMs: Date.now(), ...eventOptions };
    pending.push(event);
    await act();
    await sleep(Math.max(0, event.atMs + options.observeSeconds * 1000 - performance.now()));
  };
  const kill = (proc: BenchProcess): Promise<void> => {
    if (proc.pid !== undefined) process.kill(proc.pid, 'SIGKILL');
    return Promise.resolve();
  };

  let writerC: BenchProcess | undefined;
  let evaluatorC: BenchProcess | undefined;
  let joiner: Promise<BenchProcess> | undefined;
  await observe('SIGKILL writer-a', 'writer', () => kill(writerA));
  await observe(
    'writer-c joins',
    'writer',
    async () => {
      writerC = await consumer('writer', 'writer-c');
    },
    { informative: true },
  );
  await observe(
    'SIGKILL evaluator-a as evaluator-c starts (it joins during the stall)',
    'evaluator',
    async () => {
      await kill(evaluatorA);
      evaluatorC = await joiner;
    },
    {
      joiner: 'evaluator-c',
      // The kill (the event) waits for the joiner's first log line (configuration read,
      // database open): its JoinGroup follows within about a second, inside the dead member's
      // session, however long the machine takes to start a process.
      prepare: async () => {
        joiner = consumer('evaluator', 'evaluator-c');
        await firstLogLine(report.logDir, 'evaluator-c');
      },
    },
  );
  await observe('SIGTERM writer-b', 'writer', () => writerB.stop());
  await observe('SIGTERM evaluator-b', 'evaluator', () => evaluatorB.stop());

  const results = await probed.stop();
  report.load = results.load;
  report.probes = results.summary;

  const consumers = [writerA, writerB, writerC, evaluatorA, evaluatorB, evaluatorC].filter(
    (proc): proc is BenchProcess => proc !== undefined,
  );
  report.events = pending.map((event, i): FailoverEvent => {
    const windowEndMs = pending[i + 1]?.atMs ?? event.atMs + options.observeSeconds * 1000;
    const alert = probed.stallAfter(results.alertProbes, event.atMs, windowEndMs);
    const stored = probed.stallAfter(results.storedProbes, event.atMs, windowEndMs);
    const own = event.role === 'writer' ? stored : alert;
    const joins = consumers.flatMap((proc) =>
      joinsAfter(proc, topic, event.atWallMs, windowEndMs - event.atMs + event.atWallMs),
    );
    const joinerJoinedAfterMs =
      event.joiner === undefined
        ? undefined
        : joins.find((join) => join.process === event.joiner)?.afterMs;
    return {
      name: event.name,
      role: event.role,
      atSeconds: (event.atMs - probed.startedAtMs) / 1000,
      alert,
      stored,
      joins,
      ...(event.joiner === undefined ? {} : { joinerJoinedAfterMs }),
      met:
        event.informative === true
          ? undefined
          : own.stallMs !== undefined && own.stallMs <= targetStallMs,
    };
  });

  const { acknowledged } = results;
  const landed = await waitForAcknowledged(stack.db, acknowledged);
  report.storage = { acknowledged, stored: landed.stored, drained: landed.drained };
  if (landed.stored !== acknowledged)
    report.notes.push(
      `stored ${landed.stored} samples of ${acknowledged} acknowledged (now ${await countSamples(stack.db)})`,
    );
  report.target.met =
    report.events.length === 5 &&
    report.events.every((event) => event.met !== false) &&
    landed.stored === acknowledged;
}

/** Resolves once the process named `name` wrote its first line to its log in `logDir`. */
async function firstLogLine(logDir: string, name: string): Promise<void> {
  const deadline = performance.now() + 60_000;
  while (performance.now() < deadline) {
    try {
      if (readFileSync(join(logDir, `${name}.log`), 'utf8').includes('\n')) return;
    } catch {
      // not created yet
    }
    await sleep(20);
  }
  throw new Error(`${name} logged nothing within 60 s`);
}
