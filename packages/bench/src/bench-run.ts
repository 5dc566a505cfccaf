import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { BenchProcess } from './bench-process.js';

/**
 * The scaffolding every benchmark command shares: its command line, progress lines, undoing what
 * a run started (on success, on errors and on Ctrl-C), the machine's facts and where results go.
 */

export type Cleanup = {
  /** Registers an undo step; steps run newest first. */
  add(name: string, undo: () => Promise<void>): void;
  /** Runs every step once; idempotent, so both a signal and `finally` may call it. */
  run(): Promise<void>;
};

function createCleanup(log: (message: string) => void): Cleanup {
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
function stopOnSignals(cleanup: Cleanup): void {
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

function machineFacts(): MachineFacts {
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
function resultsFile(name: string, startedAt: Date, out: string | undefined): string {
  const stamp = startedAt
    .toISOString()
    .replace(/\.\d+Z$/, 'Z')
    .replace(/:/g, '-');
  return resolve(out ?? join('bench-results', `${name}-${stamp}.json`));
}

/** Lines at warn or above (pino level ≥ 40) or not JSON at all, in a process's output. */
function scanLogWarnings(file: string): { count: number; first: string[] } {
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

function describeError(err: unknown): string {
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

/** A benchmark command, as `runBenchCommand` runs it. */
type BenchCommand<K extends string, O, F> = {
  /** Names its results file and its log directory. */
  name: string;
  usage: string;
  /** Each option's default, by name; every option takes a value. `--out` and `--help` are added. */
  defaults: Record<K, string>;
  /** The options from the command line's values; throws naming the first bad one. */
  parseOptions(values: Record<K, string>): O;
  /** The report's own fields as they stand before the run. */
  createReport(options: O): F;
  /** The measurements; the processes it pushes have their logs scanned for warnings. */
  run(
    options: O,
    report: ReportBase & F,
    cleanup: Cleanup,
    processes: BenchProcess[],
  ): Promise<void>;
  /** Last touches once the run ended, e.g. summaries; optional. */
  finish?(report: ReportBase & F): void;
  format(report: ReportBase & F): string;
};

/**
 * Runs a benchmark command and exits: 0 when it ran, 1 when the run failed (noted in the
 * report), 2 when the command line is wrong (printed with the usage). Whatever the run started
 * is undone however it ends, Ctrl-C included; then the report is printed and written as JSON to
 * `--out`.
 */
export async function runBenchCommand<K extends string, O, F>(
  command: BenchCommand<K, O, F>,
): Promise<never> {
  const code = await runCommand(command).catch((err: unknown) => {
    process.stderr.write(`${describeError(err)}\n\n${command.usage}\n`);
    return 2;
  });
  // Exit explicitly: a socket some library left open must not keep a finished run alive.
  process.exit(code);
}

async function runCommand<K extends string, O, F>(command: BenchCommand<K, O, F>): Promise<number> {
  const startedAt = new Date();
  const stringOptions: Record<string, { type: 'string'; default: string }> = {};
  for (const [name, value] of Object.entries<string>(command.defaults))
    stringOptions[name] = { type: 'string', default: value };
  const { values } = parseArgs({
    options: {
      ...stringOptions,
      out: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write(`${command.usage}\n`);
    process.exit(0);
  }
  const options = command.parseOptions(values as Record<K, string>);
  const out = resultsFile(command.name, startedAt, values.out);
  const cleanup = createCleanup(logProgress);
  stopOnSignals(cleanup);

  const report: ReportBase & F = {
    date: startedAt.toISOString(),
    machine: machineFacts(),
    ...command.createReport(options),
    logWarnings: {},
    notes: [],
    logDir: mkdtempSync(join(os.tmpdir(), `monitor-bench-${command.name}-`)),
  };
  const processes: BenchProcess[] = [];
  let failed = false;
  try {
    await command.run(options, report, cleanup, processes);
  } catch (err) {
    failed = true;
    report.notes.push(`run failed: ${describeError(err)}`);
    logProgress(`run failed: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
  } finally {
    for (const proc of processes) report.logWarnings[proc.name] = scanLogWarnings(proc.logFile);
    await cleanup.run();
  }
  command.finish?.(report);
  noteBusyMachine(report);
  process.stdout.write(`\n${command.format(report)}\n`);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, `${JSON.stringify(report, null, 2)}\n`);
  process.stdout.write(`\nResults: ${out}\nProcess logs: ${report.logDir}\n`);
  return failed ? 1 : 0;
}

/** Notes in the report when the machine was busy before the run began. */
function noteBusyMachine(report: ReportBase): void {
  const [load] = report.machine.loadAverageAtStart;
  if ((load ?? 0) > 0.5) {
    report.notes.push(
      `the machine was not idle at start (load average ${report.machine.loadAverageAtStart.join(' ')})`,
    );
  }
}
