import type { BenchProcess } from '../bench-process.js';
import type { Cleanup } from './cleanup.js';
import { createCleanup, stopOnSignals } from './cleanup.js';
import { parseCommandLine } from './command-line.js';
import { describeError, logProgress } from './progress.js';
import type { ReportBase } from './report.js';
import { createReport, noteBusyMachine, scanLogWarnings, writeResults } from './report.js';

/**
 * The benchmark harness: a benchmark names its steps (start the target, migrate, seed,
 * measure) and the harness runs them in that order, inside `runBenchCommand`, which parses the
 * command line, undoes what the run started however it ends, and reports (the text report with
 * the machine line and its load average, and the results JSON).
 */

/** What every step gets: the parsed options, the report being filled, the run's undo list. */
export type BenchContext<O, F> = {
  options: O;
  report: ReportBase & F;
  cleanup: Cleanup;
  /** Processes whose logs are scanned for warnings once the run ends. */
  processes: BenchProcess[];
};

type Bench<K extends string, O, F, T, S> = {
  /** Names the results file and the log directory. */
  name: string;
  usage: string;
  /** Each option's default, by name; every option takes a value. `--out` and `--help` are added. */
  defaults: Record<K, string>;
  /** The options from the command line's values; throws naming the first bad one. */
  parseOptions: (values: Record<K, string>) => O;
  /** The report's own fields as they stand before the run. */
  createReport: (options: O) => F;
  /**
   * Starts what is measured, registering each thing it starts with `context.cleanup`. Omitted
   * where the benchmark compares targets that each get the machine to themselves: `measure`
   * starts them one at a time (`measureEachAlone`), and the steps get `undefined` for a target.
   */
  start?: (context: BenchContext<O, F>) => Promise<T>;
  /** Brings the target's database to the schema measured; omitted where `start` did. */
  migrate?: (target: T, context: BenchContext<O, F>) => Promise<void>;
  /**
   * Writes what the measurement reads, untimed unless the benchmark reports its time; resolves
   * what `measure` needs to know of it.
   */
  seed?: (target: T, context: BenchContext<O, F>) => Promise<S>;
  /** The measurements, into `context.report`; `seeded` is what `seed` resolved. */
  measure: (target: T, context: BenchContext<O, F>, seeded: S) => Promise<void>;
  /** Last touches once the run ended, e.g. summaries; optional. */
  finish?: (report: ReportBase & F) => void;
  format: (report: ReportBase & F) => string;
};

/** Runs `bench` and exits with `runBenchCommand`'s code. */
export async function runBench<K extends string, O, F, T = void, S = void>(
  bench: Bench<K, O, F, T, S>,
): Promise<never> {
  return await runBenchCommand<K, O, F>({
    name: bench.name,
    usage: bench.usage,
    defaults: bench.defaults,
    parseOptions: bench.parseOptions,
    createReport: bench.createReport,
    async run(options, report, cleanup, processes) {
      const context: BenchContext<O, F> = { options, report, cleanup, processes };
      // Without a start step T is void (runBench's default), which undefined is.
      const target = (await bench.start?.(context)) as T;
      await bench.migrate?.(target, context);
      // Without a seed step S is void (runBench's default), which undefined is.
      const seeded = (await bench.seed?.(target, context)) as S;
      await bench.measure(target, context, seeded);
    },
    ...(bench.finish === undefined ? {} : { finish: bench.finish }),
    format: bench.format,
  });
}

/**
 * Measures each target of `names` in turn with the machine to itself: starts it, measures it,
 * and stops it (whatever `measure` did) before the next one starts.
 */
export async function measureEachAlone<N extends string, T extends { stop(): Promise<void> }>(
  names: readonly N[],
  start: (name: N) => Promise<T>,
  measure: (target: T, name: N) => Promise<void>,
): Promise<void> {
  for (const name of names) {
    logProgress(`starting ${name}`);
    const target = await start(name);
    try {
      await measure(target, name);
    } finally {
      await target.stop();
    }
  }
}

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
async function runBenchCommand<K extends string, O, F>(
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
  const { values, out } = parseCommandLine(command.defaults, command.usage);
  const options = command.parseOptions(values);
  const cleanup = createCleanup();
  stopOnSignals(cleanup);

  const report = createReport(command.name, startedAt, command.createReport(options));
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
  const file = writeResults(report, command.name, out);
  process.stdout.write(`\nResults: ${file}\nProcess logs: ${report.logDir}\n`);
  return failed ? 1 : 0;
}
