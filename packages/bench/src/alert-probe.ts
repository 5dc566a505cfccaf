import {
  probeBreachValue,
  probeClearValue,
  probeMetric,
  probeScopeTag,
} from './alert-rule-plan.js';

/** One host sample as POST /api/v1/ingest takes it. */
export type ProbeSample = {
  host: string;
  timestamp: string;
  metrics: Record<string, number>;
  tags: Record<string, string>;
  docker_containers: {
    name: string;
    image: string;
    status: string;
    cpu_percent: number;
    memory_usage: number;
  }[];
  processes: { name: string; pid: number; cpu_percent: number; memory_rss: number }[];
};

/** The fields of an alerts list item the probe reads. */
export type ProbeAlert = {
  id: string;
  status: string;
  fired_at: string;
  investigation_id: string | null;
};

/** Spec-shaped snapshots (5 containers, 10 processes), so an investigation has them to read. */
const probeContainers = Array.from({ length: 5 }, (_, i) => ({
  name: `probe-svc-${i}`,
  image: `registry.local/probe-svc-${i}:1.${i}`,
  status: 'running',
  cpu_percent: 1 + i,
  memory_usage: 50_000_000 * (i + 1),
}));
const probeProcesses = Array.from({ length: 10 }, (_, i) => ({
  name: `probe-proc-${i}`,
  pid: 1000 + i,
  cpu_percent: 0.5 * i,
  memory_rss: 10_000_000 * (i + 1),
}));

export type ProbeDeps = {
  /** POSTs one sample; resolves once it was answered 200, rejects otherwise. */
  ingest(sample: ProbeSample): Promise<void>;
  /** GET /api/v1/alerts?rule_id=…&status=all: the rule's newest alerts, newest first. */
  listAlerts(ruleId: string): Promise<ProbeAlert[]>;
  /** GET /api/v1/investigations/:id: its status. */
  investigationStatus(id: string): Promise<string>;
  /** Milliseconds on a monotonic clock. */
  now(): number;
  sleep(ms: number): Promise<void>;
};

export type ProbeSpec = {
  host: string;
  ruleId: string;
  durationMinutes: number;
  /** A poll starts this long after the previous one started (or at once if that took longer). */
  pollIntervalMs: number;
  /** Give up on a transition not visible after this long. */
  timeoutMs: number;
};

export type ProbeOutcome = {
  /** Sample time of the sample that completed the window (the alert's `fired_at`). */
  firedAtMs: number;
  /** From the 200 of the completing sample to the answer that listed the alert; undefined: timed out. */
  fireMs: number | undefined;
  /** From the 200 of the clearing sample to the answer that listed the alert resolved. */
  resolveMs: number | undefined;
  /** Polls until the alert was visible. */
  firePolls: number;
  /**
   * From the 200 of the completing sample to the answer that showed the alert's investigation
   * completed (or failed); undefined: timed out, or the alert opened none.
   */
  investigationMs: number | undefined;
};

/** Probe samples start this far back in event time, so hours of probes never reach the future. */
const probeHistoryMs = 12 * 3_600_000;

/** Event time a probe uses: its window, then one second to the clearing sample, one to spare. */
export function probeSpanMs(durationMinutes: number): number {
  return durationMinutes * 60_000 + 2_000;
}

/**
 * One probe from `startMs` (sample time): breaching samples at `startMs` and, when the rule has
 * a duration, at `startMs` + duration (the one completing the window); then polls the rule's
 * alerts until one fired at that time is listed; then a clearing sample one second later and
 * polls until that alert is resolved, so the next probe starts from a clear state.
 */
export async function runProbe(
  spec: ProbeSpec,
  startMs: number,
  deps: ProbeDeps,
): Promise<ProbeOutcome> {
  const sample = (timeMs: number, value: number): ProbeSample => ({
    host: spec.host,
    timestamp: new Date(timeMs).toISOString(),
    metrics: { [probeMetric]: value },
    tags: { [probeScopeTag]: spec.host },
    docker_containers: probeContainers,
    processes: probeProcesses,
  });
  const firedAtMs = startMs + spec.durationMinutes * 60_000;
  if (spec.durationMinutes > 0) await deps.ingest(sample(startMs, probeBreachValue));
  await deps.ingest(sample(firedAtMs, probeBreachValue));
  const fire = await pollUntil(spec, deps, (alerts) =>
    alerts.find((alert) => Date.parse(alert.fired_at) === firedAtMs),
  );

  const investigationId = fire.found?.investigation_id ?? undefined;
  const investigation =
    investigationId === undefined
      ? Promise.resolve(undefined)
      : waitForInvestigation(spec, deps, investigationId).then((ms) =>
          ms === undefined ? undefined : fire.elapsedMs + ms,
        );
  await deps.ingest(sample(firedAtMs + 1_000, probeClearValue));
  const alertId = fire.found?.id;
  const resolve =
    alertId === undefined
      ? undefined
      : await pollUntil(spec, deps, (alerts) =>
          alerts.find((alert) => alert.id === alertId && alert.status === 'resolved'),
        );
  return {
    firedAtMs,
    fireMs: fire.found === undefined ? undefined : fire.elapsedMs,
    resolveMs: resolve?.found === undefined ? undefined : resolve.elapsedMs,
    firePolls: fire.polls,
    investigationMs: await investigation,
  };
}

/** Polls the investigation from now until it completed or failed; the time taken, or undefined. */
async function waitForInvestigation(
  spec: ProbeSpec,
  deps: ProbeDeps,
  id: string,
): Promise<number | undefined> {
  const startedAt = deps.now();
  for (;;) {
    const pollStartedAt = deps.now();
    const status = await deps.investigationStatus(id);
    const elapsedMs = deps.now() - startedAt;
    if (status === 'completed' || status === 'failed') return elapsedMs;
    if (elapsedMs >= spec.timeoutMs) return undefined;
    await deps.sleep(Math.max(0, spec.pollIntervalMs - (deps.now() - pollStartedAt)));
  }
}

/** Polls from now (just after a 200) until `match` finds an alert or the timeout passes. */
async function pollUntil(
  spec: ProbeSpec,
  deps: ProbeDeps,
  match: (alerts: ProbeAlert[]) => ProbeAlert | undefined,
): Promise<{ found: ProbeAlert | undefined; elapsedMs: number; polls: number }> {
  const answeredAt = deps.now();
  for (let polls = 1; ; polls++) {
    const pollStartedAt = deps.now();
    const found = match(await deps.listAlerts(spec.ruleId));
    const elapsedMs = deps.now() - answeredAt;
    if (found !== undefined || elapsedMs >= spec.timeoutMs) return { found, elapsedMs, polls };
    await deps.sleep(Math.max(0, spec.pollIntervalMs - (deps.now() - pollStartedAt)));
  }
}

type TimedOutcome = ProbeOutcome & { startedAtMs: number };

/**
 * Runs probes back to back until `deadline` (on `deps.now()`'s clock), each starting where the
 * last one's window ended.
 */
export async function probeUntil(
  spec: ProbeSpec,
  deps: ProbeDeps,
  deadline: number,
  notes: string[],
): Promise<TimedOutcome[]> {
  const outcomes: TimedOutcome[] = [];
  let eventTimeMs = Math.floor(Date.now() / 1000) * 1000 - probeHistoryMs;
  while (deps.now() < deadline) {
    if (eventTimeMs + probeSpanMs(spec.durationMinutes) > Date.now() - 60_000) {
      notes.push(`${spec.host} ran out of event-time history; fewer probes than time allowed`);
      break;
    }
    const startedAtMs = deps.now();
    outcomes.push({ ...(await runProbe(spec, eventTimeMs, deps)), startedAtMs });
    eventTimeMs += probeSpanMs(spec.durationMinutes);
  }
  return outcomes;
}
