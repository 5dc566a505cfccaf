import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import type { BenchProcess } from './bench-process.js';

/**
 * The scaffolding every benchmark command shares: progress lines, undoing what a run started
 * (on success, on errors and on Ctrl-C), the machine's facts and where results go.
 */

export type Cleanup = {
  /** Registers an undo step; steps run newest first. */
  add(name: string, undo: () => Promise<void>): void;
  /** Runs every step once; idempotent, so both a signal and `finally` may call it. */
  run(): Promise<void>;
};

export function createCleanup(log: (message: string) => void): Cleanup {
  const steps: { name: string; undo: () => Promise<void> }[] = [];
  let running: Promise<void> | undefined;
  return {
    add(name, undo) {
      steps.push({ name, undo });
    },
    run() {
      running ??= (async () => {
        for (const step of steps.reverse()) {
          try {
            await step.undo();
          } catch (err) {
            log(`could not stop ${step.name}: ${describeError(err)}`);
          }
        }
      })();
      return running;
    },
  };
}

/** SIGINT and SIGTERM stop everything the run started, then exit with the signal's code. */
export function stopOnSignals(cleanup: Cleanup): void {
  for (const signal of ['SIGINT', 'SIGTERM'] as const) {
    process.once(signal, () => {
      logProgress(`${signal}: stopping everything this run started`);
      void cleanup.run().finally(() => process.exit(signal === 'SIGINT' ? 130 : 143));
    });
  }
}

/** A progress line on stderr, so stdout carries only the report. */
export function logProgress(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

export type MachineFacts = {
  os: string;
  cpuModel: string;
  cpuCount: number;
  totalMemoryBytes: number;
  node: string;
  /** 1, 5 and 15-minute load averages when the run started: other work on the box skews figures. */
  loadAverageAtStart: number[];
};

export function machineFacts(): MachineFacts {
  const cpus = os.cpus();
  return {
    os: `${os.type()} ${os.release()} ${os.arch()}`,
    cpuModel: cpus[0]?.model.trim() ?? 'unknown',
    cpuCount: cpus.length,
    totalMemoryBytes: os.totalmem(),
    node: process.version,
    loadAverageAtStart: os.loadavg().map((v) => Math.round(v * 100) / 100),
  };
}

/** `bench-results/<name>-2026-11-22T10-00-00Z.json` unless `out` names a file. */
export function resultsFile(name: string, startedAt: Date, out: string | undefined): string {
  const stamp = startedAt
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/:/g, '-');
  return resolve(out ?? join('bench-results', `${name}-${stamp}.json`));
}

/** Lines at warn or above (pino level ≥ 40) or not JSON at all, in a process's output. */
export function scanLogWarnings(file: string): { count: number; first: string[] } {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    return { count: 0, first: [] };
  }
  const flagged: string[] = [];
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    try {
      const entry = JSON.parse(line) as { level?: unknown };
      const level = entry.level;
      const serious =
        typeof level === 'number'
          ? level >= 40
          : typeof level === 'string' && ['warn', 'error', 'fatal'].includes(level);
      if (serious) flagged.push(line);
    } catch {
      flagged.push(line);
    }
  }
  return { count: flagged.length, first: flagged.slice(0, 3) };
}

/** The variables of `env` whose names `keep` accepts. */
export function pickEnv(
  env: NodeJS.ProcessEnv,
  keep: (name: string) => boolean,
): Record<string, string> {
  const picked: Record<string, string> = {};
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && keep(name)) picked[name] = value;
  }
  return picked;
}

export function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/** Parses a command-line integer in `[min, max]`, naming the option when it is not one. */
export function integerOption(
  name: string,
  value: string,
  min = 1,
  max = Number.MAX_SAFE_INTEGER,
): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < min || n > max)
    throw new Error(`--${name} must be an integer from ${min} to ${max}`);
  return n;
}

/** What every benchmark report carries besides its figures. */
export type ReportBase = {
  /** When the run started. */
  date: string;
  machine: MachineFacts;
  /** Log lines at warn or above from the processes the run started, by process. */
  logWarnings: Record<string, { count: number; first: string[] }>;
  notes: string[];
  logDir: string;
};

/**
 * Runs a benchmark, then always: scans its processes' logs, undoes what it started, prints the
 * report (`format`) and writes it as JSON to `out`. A failed run is noted in the report and
 * gives exit code 1.
 */
export async function runAndReport<R extends ReportBase>(args: {
  report: R;
  cleanup: Cleanup;
  out: string;
  run: (processes: BenchProcess[]) => Promise<void>;
  /** Last touches once the run ended (summaries); optional. */
  finish?: (report: R) => void;
  format: (report: R) => string;
}): Promise<number> {
  const { report } = args;
  const processes: BenchProcess[] = [];
  let failed = false;
  try {
    await args.run(processes);
  } catch (err) {
    failed = true;
    report.notes.push(`run failed: ${describeError(err)}`);
    logProgress(`run failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  } finally {
    for (const proc of processes) report.logWarnings[proc.name] = scanLogWarnings(proc.logFile);
    await args.cleanup.run();
  }
  args.finish?.(report);
  process.stdout.write(`\n${args.format(report)}\n`);
  mkdirSync(dirname(args.out), { recursive: true });
  writeFileSync(args.out, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`\nResults: ${args.out}\nProcess logs: ${report.logDir}\n`);
  return failed ? 1 : 0;
}

/** Notes in the report when the machine was busy before the run began. */
export function noteBusyMachine(report: ReportBase): void {
  const [load] = report.machine.loadAverageAtStart;
  if ((load ?? 0) > 0.5) {
    report.notes.push(
      `the machine was not idle at start (load average ${report.machine.loadAverageAtStart.join(' ')})`,
    );
  }
}
