import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runToCompletion } from './bench-process.js';
import type { Cleanup } from './harness/cleanup.js';
import { findChildPid } from './proc-stats.js';
import { compareMetricNames } from './compare-fleet.js';
import type { MeasuredProcess, ResourceUsage } from './resource-sampler.js';
import { startResourceSampler } from './resource-sampler.js';
import type { WrkFigures } from './wrk-result.js';
import { parseWrkOutput } from './wrk-result.js';
import type { WrkScriptOptions } from './wrk-script.js';
import { createWrkScript } from './wrk-script.js';

/** wrk's name among each load's process figures. */
const loadGeneratorName = 'wrk';

const memorySampleIntervalMs = 250;
/** A request unanswered this long counts as a timeout (wrk's default, 2 s, is below batched p99s). */
const requestTimeoutSeconds = 30;

export type WrkLoad = {
  /** Names the script and the output in `logDir`; unique per load of a run. */
  name: string;
  baseUrl: string;
  script: WrkScriptOptions;
  connections: number;
  durationSeconds: number;
};

/**
 * Runs wrk with `load`'s generated script under the watchdog (stopped with the rest on Ctrl-C),
 * samples `measured` and wrk itself meanwhile, and returns wrk's figures with the usage.
 */
export async function runWrkLoad(
  load: WrkLoad,
  context: { wrk: string; logDir: string; cleanup: Cleanup; measured: readonly MeasuredProcess[] },
): Promise<{ figures: WrkFigures; usage: ResourceUsage }> {
  const scriptFile = join(context.logDir, `${load.name}.lua`);
  writeFileSync(scriptFile, createWrkScript(load.script));
  let watchdogPid: number | undefined;
  let wrkPid: number | undefined;
  const wrkProcess: MeasuredProcess = {
    name: loadGeneratorName,
    pid: () =>
      (wrkPid ??= watchdogPid === undefined ? undefined : findChildPid(watchdogPid, context.wrk)),
  };
  const sampler = startResourceSampler([...context.measured, wrkProcess], {
    intervalMs: memorySampleIntervalMs,
  });
  let logFile: string;
  try {
    ({ logFile } = await runToCompletion(
      {
        name: load.name,
        command: context.wrk,
        args: [
          ...['-t', String(load.script.threads), '-c', String(load.connections)],
          ...['-d', `${load.durationSeconds}s`, '--timeout', `${requestTimeoutSeconds}s`],
          ...['-s', scriptFile, load.baseUrl],
        ],
        cwd: context.logDir,
        env: { PATH: process.env['PATH'] ?? '' },
        logDir: context.logDir,
      },
      (running) => {
        watchdogPid = running.pid;
        context.cleanup.add(load.name, () => running.stop());
      },
    ));
  } catch (err) {
    sampler.stop();
    throw err;
  }
  const usage = sampler.stop();
  const samplesPerRequest = load.script.payloadsPerRequest * compareMetricNames.length;
  return { figures: parseWrkOutput(readFileSync(logFile, 'utf8'), samplesPerRequest), usage };
}
