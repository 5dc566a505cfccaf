import { wrkResultMarker } from './wrk-script.js';

/** What the script's `done` printed: wrk's own counters plus the answers counted by status. */
type WrkOutput = {
  durationUs: number;
  /** Requests wrk saw answered (any status). */
  completed: number;
  /** Requests the script built: answered, plus those still in flight when wrk stopped. */
  sent: number;
  /** Answers by HTTP status. */
  statuses: Record<string, number>;
  /** wrk's socket errors and its count of statuses ≥ 400. */
  errors: { connect: number; read: number; write: number; status: number; timeout: number };
  latencyUs: { mean: number; p50: number; p90: number; p99: number; max: number };
};

/** One wrk run's figures, as the comparison reports them. */
export type WrkFigures = {
  durationSeconds: number;
  /** Requests answered 2xx. */
  acknowledged: number;
  requestsPerSecond: number;
  /** Samples of the 2xx answers: what the target acknowledged. */
  samplesAcknowledged: number;
  samplesPerSecond: number;
  /** Samples of every request sent, answered or not: the most the target may store. */
  samplesSent: number;
  /** Requests sent but never answered (in flight when wrk stopped). */
  unanswered: number;
  /** Answers other than 2xx, by status. */
  failedStatuses: Record<string, number>;
  socketErrors: number;
  /** Answers other than 2xx plus socket errors. */
  failed: number;
  latency: { meanMs: number; p50Ms: number; p90Ms: number; p99Ms: number; maxMs: number };
};

/**
 * The figures of a wrk run from its output (the script's `wrk-result` line), each request
 * carrying `samplesPerRequest` samples. Throws when the line is missing, e.g. wrk failed to
 * load the script.
 */
export function parseWrkOutput(output: string, samplesPerRequest: number): WrkFigures {
  const line = output
    .split('\n')
    .reverse()
    .find((candidate) => candidate.startsWith(wrkResultMarker));
  if (line === undefined)
    throw new Error(`wrk printed no ${wrkResultMarker.trim()} line:\n${output.slice(-2000)}`);
  const raw = JSON.parse(line.slice(wrkResultMarker.length)) as WrkOutput;
  let acknowledged = 0;
  let answered = 0;
  const failedStatuses: Record<string, number> = {};
  for (const [status, count] of Object.entries(raw.statuses)) {
    answered += count;
    if (status.startsWith('2')) acknowledged += count;
    else failedStatuses[status] = count;
  }
  const durationSeconds = raw.durationUs / 1e6;
  const perSecond = (n: number): number => (durationSeconds > 0 ? n / durationSeconds : 0);
  const ms = (us: number): number => Math.round(us) / 1000;
  const { errors } = raw;
  const socketErrors = errors.connect + errors.read + errors.write + errors.timeout;
  return {
    durationSeconds,
    acknowledged,
    requestsPerSecond: perSecond(acknowledged),
    samplesAcknowledged: acknowledged * samplesPerRequest,
    samplesPerSecond: perSecond(acknowledged * samplesPerRequest),
    samplesSent: raw.sent * samplesPerRequest,
    unanswered: Math.max(0, raw.sent - answered),
    failedStatuses,
    socketErrors,
    failed: answered - acknowledged + socketErrors,
    latency: {
      meanMs: ms(raw.latencyUs.mean),
      p50Ms: ms(raw.latencyUs.p50),
      p90Ms: ms(raw.latencyUs.p90),
      p99Ms: ms(raw.latencyUs.p99),
      maxMs: ms(raw.latencyUs.max),
    },
  };
}
