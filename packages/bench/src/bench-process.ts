import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { startSupervised } from '@monitor/testkit';
import type { SupervisedProcess } from '@monitor/testkit';
import { findChildPid } from './proc-stats.js';

const readyTimeoutMs = 60_000;

export type BenchProcess = {
  readonly name: string;
  readonly baseUrl: string;
  readonly logFile: string;
  /** PID of the process itself (not of its watchdog), once known; for CPU accounting. */
  readonly pid: number | undefined;
  /** SIGTERM, then wait until it exited. Idempotent. */
  stop(): Promise<void>;
};

export type ProcessSpec = {
  name: string;
  command: string;
  /** The program running once started, when `command` execs it (as a launcher does). */
  program?: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  /** Directory for the process's output (`<name>.log`). */
  logDir: string;
  /** Removed by the watchdog once the process is gone, however this one ends (a temp dir). */
  removeOnExit?: string;
};

/**
 * Starts a long-running HTTP process under testkit's watchdog (so it dies with this one however
 * this one ends, SIGKILL included) and waits until GET `readyPath` on `port` answers 200.
 */
export async function startHttpProcess(
  spec: ProcessSpec & { port: number; readyPath: string },
): Promise<BenchProcess> {
  const supervised = supervise(spec);
  const baseUrl = `http://127.0.0.1:${spec.port}`;
  const deadline = Date.now() + readyTimeoutMs;
  let exitCode: number | undefined;
  void supervised.exited.then((code) => (exitCode = code));
  for (;;) {
    if (exitCode !== undefined) {
      throw new Error(
        `${spec.name} exited with ${exitCode} before it was ready:\n${supervised.tail()}`,
      );
    }
    if (await answers(`${baseUrl}${spec.readyPath}`)) break;
    if (Date.now() > deadline) {
      await supervised.stop();
      throw new Error(`${spec.name} was not ready within the time allowed:\n${supervised.tail()}`);
    }
    await sleep(100);
  }
  const pid = findChildPid(supervised.pid, spec.program ?? spec.command);
  return {
    name: spec.name,
    baseUrl,
    logFile: supervised.logFile,
    pid,
    stop: () => supervised.stop(),
  };
}

/**
 * Runs a one-shot command to completion under the watchdog; throws with its output when it
 * exits with a code other than 0, else resolves with the file its output went to. `track`
 * receives the running process (`pid` is its watchdog's), so an interrupt can stop it.
 */
export async function runToCompletion(
  spec: ProcessSpec,
  track: (running: { readonly pid: number; stop(): Promise<void> }) => void,
): Promise<{ logFile: string }> {
  const supervised = supervise(spec);
  track(supervised);
  const code = await supervised.exited;
  if (code !== 0) throw new Error(`${spec.name} exited with ${code}:\n${supervised.tail()}`);
  return { logFile: supervised.logFile };
}

function supervise(spec: ProcessSpec): SupervisedProcess {
  return startSupervised({
    command: spec.command,
    args: spec.args,
    cwd: spec.cwd,
    env: spec.env,
    logFile: join(spec.logDir, `${spec.name}.log`),
    removeOnExit: spec.removeOnExit,
  });
}

async function answers(url: string): Promise<boolean> {
  try {
    const response = await fetch(url, { signal: AbortSignal.timeout(2_000) });
    await response.arrayBuffer();
    return response.ok;
  } catch {
    return false;
  }
}
