import type { BenchProcess } from './bench-process.js';
import type { WireFormat } from './compare-fleet.js';
import type { MeasuredProcess } from './resource-sampler.js';

export const targetNames = ['victoria-metrics', 'embedded', 'kafka'] as const;
export type TargetName = (typeof targetNames)[number];

/** A system `bench:compare` loads: where its ingest listens and how to count what it stored. */
export type CompareTarget = {
  readonly name: TargetName;
  readonly format: WireFormat;
  readonly baseUrl: string;
  /** Path and query of every ingest request. */
  readonly path: string;
  readonly headers: Readonly<Record<string, string>>;
  /** Its server processes, charged with CPU and memory during each load. */
  readonly measured: readonly MeasuredProcess[];
  /** Its processes whose logs the report scans for warnings. */
  readonly logged: readonly BenchProcess[];
  /**
   * Polls until at least `expected` samples are stored or `timeoutMs` passed, then counts once
   * more after `settleMs`, so samples of requests still in flight when the load stopped show up.
   */
  waitForStored(options: {
    expected: number;
    timeoutMs: number;
    settleMs: number;
  }): Promise<{ stored: number; drained: boolean }>;
  /** As waitForStored, for native histograms, where the target counts them. */
  waitForStoredHistograms?(options: {
    expected: number;
    timeoutMs: number;
    settleMs: number;
  }): Promise<{ stored: number; drained: boolean }>;
  /**
   * Bytes the samples topic holds on the broker's disk (its partitions' log segments), where
   * the target has a bus whose disk can be read here; undefined otherwise.
   */
  busBytes?(): number | undefined;
  /** Stops what it started (idempotent); also registered with the run's cleanup. */
  stop(): Promise<void>;
};

/** A target's process that is watched by its own pid. */
export function measuredProcess(name: string, proc: BenchProcess): MeasuredProcess {
  return { name, pid: () => proc.pid };
}
