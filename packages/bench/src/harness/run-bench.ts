import type { BenchProcess } from '../bench-process.js';
import type { Cleanup, ReportBase } from '../bench-run.js';
import { logProgress, runBenchCommand } from '../bench-run.js';

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
