import { createSeededRandom } from '@monitor/testkit';

/**
 * The storage benchmark's fleet: every value of every series over the whole history, generated
 * once (deterministic from the seed) so that VictoriaMetrics and our storage get exactly the
 * same samples.
 *
 * Shapes, chosen to look like what host agents (node_exporter, Telegraf, psutil-based agents)
 * send every 30 s, because storage engines compress real shapes very differently from constant
 * or random data:
 * - gauges are a per-host level plus a daily cycle plus autocorrelated noise (AR(1)) plus a
 *   little white noise, clamped to their range and rounded to the precision agents report
 *   (percentages to 1 decimal, load to 2, memory to whole 4 KiB pages, process counts whole);
 * - counters only ever grow: each 30 s increment is a rate that follows the daily cycle,
 *   perturbed by log-normal noise (bursty traffic), times 30 s; bytes are whole (disk writes
 *   whole 4 KiB blocks), CPU seconds have 2 decimals (USER_HZ = 100, as node_exporter reports).
 *   No resets: a counter reset is rare enough on a fleet not to change the picture.
 */

type GaugeShape = {
  kind: 'gauge';
  name: string;
  /** Clamp bounds. */
  min: number;
  max: number;
  /** Per-host level, uniform in this range. */
  level: readonly [number, number];
  /** Daily cycle amplitude, uniform in this range (0 for none). */
  dailyAmplitude: readonly [number, number];
  /** Standard deviation of the AR(1) noise's steady state. */
  noise: number;
  /** Standard deviation of the point-to-point white noise on top. */
  jitter: number;
  /** Values are whole multiples of this (0.1, 0.01, 1, 4096). */
  quantum: number;
};

type CounterShape = {
  kind: 'counter';
  name: string;
  /** The counter's value at the first point (accumulated since boot), uniform in this range. */
  start: readonly [number, number];
  /** Mean rate per second, per host uniform in this range. */
  rate: readonly [number, number];
  /** Share of the rate that follows the daily cycle (0..1). */
  dailyShare: number;
  /** Sigma of the log-normal multiplier of each increment (burstiness). */
  burstiness: number;
  /** Increments are whole multiples of this (1 byte, 4096-byte blocks, 0.01 s). */
  quantum: number;
};

export type MetricShape = GaugeShape | CounterShape;

/** The ten metrics of every host: six gauges and four counters. */
export const storageMetricShapes: readonly MetricShape[] = [
  gauge('cpu_percent', {
    min: 0,
    max: 100,
    level: [3, 55],
    daily: [2, 20],
    noise: 4,
    jitter: 1.5,
    quantum: 0.1,
  }),
  gauge('memory_percent', {
    min: 0,
    max: 100,
    level: [25, 85],
    daily: [0, 4],
    noise: 1.5,
    jitter: 0.2,
    quantum: 0.1,
  }),
  gauge('disk_used_percent', {
    min: 0,
    max: 100,
    level: [10, 90],
    daily: [0, 0.5],
    noise: 0.3,
    jitter: 0.01,
    quantum: 0.01,
  }),
  gauge('load_1m', {
    min: 0,
    max: 64,
    level: [0.1, 4],
    daily: [0.1, 1.5],
    noise: 0.4,
    jitter: 0.15,
    quantum: 0.01,
  }),
  gauge('memory_used_bytes', {
    min: 0,
    max: 64 * 2 ** 30,
    level: [1 * 2 ** 30, 24 * 2 ** 30],
    daily: [0, 2 ** 30],
    noise: 2 ** 28,
    jitter: 2 ** 22,
    quantum: 4096,
  }),
  gauge('processes', {
    min: 1,
    max: 5000,
    level: [120, 600],
    daily: [0, 40],
    noise: 8,
    jitter: 2,
    quantum: 1,
  }),
  counter('net_received_bytes_total', {
    start: [1e9, 5e12],
    rate: [2e4, 5e7],
    dailyShare: 0.6,
    burstiness: 0.5,
    quantum: 1,
  }),
  counter('net_sent_bytes_total', {
    start: [1e9, 5e12],
    rate: [1e4, 2e7],
    dailyShare: 0.6,
    burstiness: 0.6,
    quantum: 1,
  }),
  counter('disk_written_bytes_total', {
    start: [1e10, 1e13],
    rate: [1e4, 1e7],
    dailyShare: 0.4,
    burstiness: 0.9,
    quantum: 4096,
  }),
  counter('cpu_seconds_total', {
    start: [1e4, 1e8],
    rate: [0.05, 6],
    dailyShare: 0.5,
    burstiness: 0.3,
    quantum: 0.01,
  }),
];

export const storageMetricNames: readonly string[] = storageMetricShapes.map((m) => m.name);

type StorageHost = {
  name: string;
  tags: { environment: string; region: string; role: string };
};

type StorageFleetOptions = {
  hostCount: number;
  /** Points per series (2,880 for 24 h at 30 s). */
  pointsPerSeries: number;
  intervalMs: number;
  /** Time of point 0, epoch ms. */
  startMs: number;
  seed: number;
  /**
   * Scrape jitter: each host's point `p` is stamped up to this many milliseconds before or
   * after its place on the grid (uniform, whole ms; 0, the default, for an exact grid). All
   * metrics of a host's point share its time, as a scrape's samples do.
   */
  jitterMs?: number;
};

export type StorageFleet = StorageFleetOptions & {
  hosts: readonly StorageHost[];
  metrics: readonly MetricShape[];
  /** Number of series: hosts × metrics. Series `s` is host `⌊s / metrics⌋`, metric `s % metrics`. */
  seriesCount: number;
  /** Every value, series after series: value of point `p` of series `s` at `s * pointsPerSeries + p`. */
  values: Float64Array;
  /** Samples in the fleet: series × points. */
  sampleCount: number;
  /** Epoch ms of point `p` of host `host` (0 when there is no jitter, any host). */
  timeOf(point: number, host?: number): number;
};

const environments = ['prod', 'prod', 'prod', 'staging', 'dev'] as const;
const regions = ['eu-west-1', 'eu-central-1', 'us-east-1', 'us-west-2', 'ap-south-1'] as const;
const roles = ['api', 'worker', 'db', 'cache', 'edge', 'batch', 'search', 'queue'] as const;
const dayMs = 24 * 3_600_000;

/** Generates the whole fleet's history; the same options give the same values. */
export function createStorageFleet(options: StorageFleetOptions): StorageFleet {
  const { hostCount, pointsPerSeries, seed } = options;
  const metrics = storageMetricShapes;
  const random = createSeededRandom(seed);
  const hosts: StorageHost[] = Array.from({ length: hostCount }, (_, i) => {
    const role = pick(roles, random.next);
    return {
      name: `${role}-${String(i).padStart(5, '0')}`,
      tags: {
        environment: pick(environments, random.next),
        region: pick(regions, random.next),
        role,
      },
    };
  });
  const seriesCount = hostCount * metrics.length;
  const values = new Float64Array(seriesCount * pointsPerSeries);
  const times = Array.from(
    { length: pointsPerSeries },
    (_, p) => options.startMs + p * options.intervalMs,
  );
  for (let host = 0; host < hostCount; host++) {
    // Every host's peak hour differs a little (time zones of its users, its batch schedule).
    const phase = random.next() * 2 * Math.PI;
    for (let m = 0; m < metrics.length; m++) {
      const shape = metrics[m] as MetricShape;
      const out = values.subarray(
        (host * metrics.length + m) * pointsPerSeries,
        (host * metrics.length + m + 1) * pointsPerSeries,
      );
      if (shape.kind === 'gauge') fillGauge(out, shape, times, phase, random);
      else fillCounter(out, shape, times, options.intervalMs, phase, random);
    }
  }
  // Drawn after the values, so that the same seed gives the same values with or without it.
  const jitterMs = options.jitterMs ?? 0;
  const offsets = new Int32Array(jitterMs > 0 ? hostCount * pointsPerSeries : 0);
  for (let i = 0; i < offsets.length; i++) {
    offsets[i] = Math.floor(random.next() * (2 * jitterMs + 1)) - jitterMs;
  }
  return {
    ...options,
    hosts,
    metrics,
    seriesCount,
    values,
    sampleCount: seriesCount * pointsPerSeries,
    timeOf: (point, host = 0) =>
      options.startMs +
      point * options.intervalMs +
      (jitterMs > 0 ? (offsets[host * pointsPerSeries + point] ?? 0) : 0),
  };
}

/** AR(1) coefficient per 30 s step: noise decorrelates over a few minutes. */
const persistence = 0.95;

function fillGauge(
  out: Float64Array,
  shape: GaugeShape,
  times: readonly number[],
  phase: number,
  random: ReturnType<typeof createSeededRandom>,
): void {
  const level = uniform(shape.level, random.next);
  const amplitude = uniform(shape.dailyAmplitude, random.next);
  // Steady-state standard deviation `noise` for the AR(1) process.
  const innovation = shape.noise * Math.sqrt(1 - persistence * persistence);
  let drift = random.gaussian(0, shape.noise);
  for (let p = 0; p < out.length; p++) {
    drift = persistence * drift + random.gaussian(0, innovation);
    const daily = amplitude * Math.sin((2 * Math.PI * (times[p] ?? 0)) / dayMs + phase);
    const raw = level + daily + drift + random.gaussian(0, shape.jitter);
    out[p] = quantize(Math.min(shape.max, Math.max(shape.min, raw)), shape.quantum);
  }
}

function fillCounter(
  out: Float64Array,
  shape: CounterShape,
  times: readonly number[],
  intervalMs: number,
  phase: number,
  random: ReturnType<typeof createSeededRandom>,
): void {
  const rate = uniform(shape.rate, random.next);
  let value = quantize(uniform(shape.start, random.next), shape.quantum);
  // The log-normal multiplier's mean is 1: exp(σ²/2) compensated.
  const sigma = shape.burstiness;
  const seconds = intervalMs / 1000;
  for (let p = 0; p < out.length; p++) {
    const daily = 1 + shape.dailyShare * Math.sin((2 * Math.PI * (times[p] ?? 0)) / dayMs + phase);
    const burst = Math.exp(random.gaussian(-(sigma * sigma) / 2, sigma));
    value = quantize(value + Math.max(0, rate * daily * burst * seconds), shape.quantum);
    out[p] = value;
  }
}

/**
 * `value` rounded to a whole multiple of `quantum`, computed so that decimal quanta give the
 * shortest decimal (12.3, not 12.299999999999999): what an agent's text formatting would send.
 */
export function quantize(value: number, quantum: number): number {
  if (quantum >= 1) return Math.round(value / quantum) * quantum;
  const scale = Math.round(1 / quantum);
  return Math.round(value * scale) / scale;
}

function gauge(
  name: string,
  shape: {
    min: number;
    max: number;
    level: readonly [number, number];
    daily: readonly [number, number];
    noise: number;
    jitter: number;
    quantum: number;
  },
): GaugeShape {
  const { daily, ...rest } = shape;
  return { kind: 'gauge', name, dailyAmplitude: daily, ...rest };
}

function counter(name: string, shape: Omit<CounterShape, 'kind' | 'name'>): CounterShape {
  return { kind: 'counter', name, ...shape };
}

function uniform([low, high]: readonly [number, number], random: () => number): number {
  return low + (high - low) * random();
}

function pick<T>(values: readonly T[], random: () => number): T {
  const value = values[Math.floor(random() * values.length)];
  if (value === undefined) throw new RangeError('pick from an empty list');
  return value;
}
