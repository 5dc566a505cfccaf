import { spawn } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { markOwner } from './service-dir.js';
import { fileURLToPath } from 'node:url';

/** What the watchdog needs to run and later end one service process. */
export type WatchdogSpec = {
  command: string;
  args: string[];
  cwd: string;
  env: Record<string, string>;
  uid?: number;
  gid?: number;
  logFile: string;
  /** Removed once the service is gone. */
  removeOnExit?: string;
  stopSignal: NodeJS.Signals;
  stopTimeoutMs: number;
  /** The service is stopped as soon as this process (the one that started it) no longer exists. */
  ownerPid: number;
};

export type SupervisedProcess = {
  /** PID of the watchdog; signalling it stops the service. */
  readonly pid: number;
  readonly logFile: string;
  /** Resolves once the service exited and its temp dir is gone. Idempotent. */
  stop(): Promise<void>;
  /** Resolves with the exit code when the watchdog exits for any reason. */
  readonly exited: Promise<number>;
  /** The last lines of the service's log, for error messages. */
  tail(lines?: number): string;
};

export type SupervisedOptions = Omit<WatchdogSpec, 'ownerPid' | 'stopSignal' | 'stopTimeoutMs'> & {
  stopSignal?: NodeJS.Signals;
  stopTimeoutMs?: number;
};

/** The command that runs a TypeScript or compiled script of this package in a new Node process. */
function nodeScript(moduleUrl: string): { command: string; args: string[] } {
  const path = fileURLToPath(moduleUrl);
  return path.endsWith('.ts')
    ? { command: process.execPath, args: ['--import', 'tsx', path] }
    : { command: process.execPath, args: [path] };
}

/**
 * Starts `command` under a watchdog process of its own, so that the service dies with the process
 * that started it however that one ends: stop(), a signal to the process group, or SIGKILL.
 */
export function startSupervised(options: SupervisedOptions): SupervisedProcess {
  const spec: WatchdogSpec = {
    ...options,
    stopSignal: options.stopSignal ?? 'SIGTERM',
    stopTimeoutMs: options.stopTimeoutMs ?? 10_000,
    ownerPid: process.pid,
  };
  mkdirSync(spec.cwd, { recursive: true });
  const watchdog = nodeScript(
    new URL(`./watchdog${extensionOf(import.meta.url)}`, import.meta.url).href,
  );
  const child = spawn(watchdog.command, [...watchdog.args, JSON.stringify(spec)], {
    stdio: ['ignore', 'inherit', 'inherit'],
  });
  if (child.pid === undefined) throw new Error(`could not start a watchdog for ${options.command}`);
  if (options.removeOnExit !== undefined) markOwner(options.removeOnExit, child.pid);
  const pid = child.pid;
  const exited = new Promise<number>((resolve) => child.on('exit', (code) => resolve(code ?? 1)));
  let stopping: Promise<void> | undefined;
  return {
    pid,
    logFile: spec.logFile,
    exited,
    stop() {
      stopping ??= (async () => {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
        await exited;
      })();
      return stopping;
    },
    tail(lines = 30) {
      try {
        return readFileSync(spec.logFile, 'utf8').split('\n').slice(-lines).join('\n');
      } catch {
        return '(no log)';
      }
    },
  };
}

function extensionOf(url: string): string {
  return url.endsWith('.ts') ? '.ts' : '.js';
}
