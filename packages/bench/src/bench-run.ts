/**
 * The harness's command pieces under their former path, for promql-bench.ts until it describes
 * itself with `runBench`; everything else imports them from harness/.
 */
export type { Cleanup } from './harness/cleanup.js';
export { integerOption } from './harness/command-line.js';
export { logProgress } from './harness/progress.js';
export type { ReportBase } from './harness/report.js';
export { runBenchCommand } from './harness/run-bench.js';
