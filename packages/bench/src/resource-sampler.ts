import {
  cpuSnapshot,
  cpuUsedBetween,
  processCpuSeconds,
  processRssBytes,
  processTreeCpuSeconds,
  processTreePssBytes,
} from './proc-stats.js';

/** A process (or process tree) whose CPU and memory a load is charged with. */
export type MeasuredProcess = {
  readonly name: string;
  /** Looked up at every sample, so a process that starts late (the load generator) is found. */
  pid(): number | undefined;
  /**
   * The process and its descendants, e.g. PostgreSQL's postmaster and backends: CPU with the
   * children they reaped, memory as proportional set size (shared buffers counted once).
   */
  readonly tree?: boolean;
};

export type ProcessUsage = {
  /** CPU seconds used while sampling; undefined if the process was never seen. */
  cpuSeconds: number | undefined;
  /** The largest memory sample while sampling. */
  peakMemoryBytes: number | undefined;
  /** `rss` of a single process, `pss` summed over a tree. */
  memory: 'rss' | 'pss';
};

export type ResourceUsage = {
  byProcess: Record<string, ProcessUsage>;
  /** CPU seconds of this (the benchmark's own) process. */
  selfCpuSeconds: number;
  machineBusyPercent: number | undefined;
};

export type ResourceSampler = {
  /** Takes the last sample and returns the usage since start; call once. */
  stop(): ResourceUsage;
};

/**
 * Samples the processes' memory every `intervalMs` from now until `stop()`, and charges each
 * with the CPU it used in between. A process seen only after the start (the load generator) is
 * charged from 0, since it started inside the span; one gone by the end keeps its last sample.
 */
export function startResourceSampler(
  processes: readonly MeasuredProcess[],
  options: { intervalMs: number },
): ResourceSampler {
  type State = { firstCpu?: number; lastCpu?: number; peakMemory?: number; seenAtStart: boolean };
  const cpuOf = (proc: MeasuredProcess): number | undefined =>
    proc.tree ? processTreeCpuSeconds(proc.pid()) : processCpuSeconds(proc.pid());
  const memoryOf = (proc: MeasuredProcess): number | undefined =>
    proc.tree ? processTreePssBytes(proc.pid()) : processRssBytes(proc.pid());

  const machineBefore = cpuSnapshot([]);
  const states = processes.map((proc): State => {
    const cpu = cpuOf(proc);
    return { firstCpu: cpu, lastCpu: cpu, seenAtStart: cpu !== undefined };
  });
  const sample = (): void => {
    processes.forEach((proc, index) => {
      const state = states[index];
      if (state === undefined) return;
      const cpu = cpuOf(proc);
      if (cpu !== undefined) state.lastCpu = cpu;
      const memory = memoryOf(proc);
      if (memory !== undefined) state.peakMemory = Math.max(state.peakMemory ?? 0, memory);
    });
  };
  sample();
  const timer = setInterval(sample, options.intervalMs);
  // A sampler left running by mistake must not keep a finished run alive.
  timer.unref();

  return {
    stop() {
      clearInterval(timer);
      sample();
      const machine = cpuUsedBetween(machineBefore, cpuSnapshot([]));
      const byProcess: Record<string, ProcessUsage> = {};
      processes.forEach((proc, index) => {
        const state = states[index];
        const from = state?.seenAtStart ? state.firstCpu : 0;
        byProcess[proc.name] = {
          cpuSeconds:
            state?.lastCpu === undefined || from === undefined ? undefined : state.lastCpu - from,
          peakMemoryBytes: state?.peakMemory,
          memory: proc.tree ? 'pss' : 'rss',
        };
      });
      return {
        byProcess,
        selfCpuSeconds: machine.seconds['self'] ?? 0,
        machineBusyPercent: machine.machineBusyPercent,
      };
    },
  };
}
