import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createLogFile, waitUntilReady } from './postgres.js';
import { startSupervised } from './supervised-process.js';

/** A metrics agent (Prometheus, collectd, an exporter) that a test started and must stop. */
export type AgentProcess = {
  /** PID of the agent itself (not of its watchdog): gone once `stop()` resolved. */
  readonly pid: number;
  /** Stops the agent (SIGTERM, SIGKILL after 10 s) and removes its temp dir. Idempotent. */
  stop(): Promise<void>;
  /** The last lines of its stdout and stderr, for a failing test's message. */
  tail(lines?: number): string;
};

type AgentProcessOptions = {
  /** For messages, e.g. `prometheus`. */
  what: string;
  command: string;
  args: string[];
  /** Its temp dir (from `createServiceDir`), removed when it ends. */
  dir: string;
  /** Resolves once the agent works, throws while it does not yet; `logFile` has its output. */
  probe: (agent: { logFile: string }) => Promise<void>;
  readyTimeoutMs?: number;
};

/**
 * Runs an agent in the foreground under a watchdog, with its output in `dir`, and resolves once
 * `probe` succeeds; when it exits first or never gets ready, throws with the tail of its log.
 */
export async function startAgentProcess(options: AgentProcessOptions): Promise<AgentProcess> {
  const logFile = createLogFile(join(options.dir, `${options.what}.log`));
  const watchdog = startSupervised({
    command: options.command,
    args: options.args,
    cwd: options.dir,
    env: agentEnv(),
    logFile,
    removeOnExit: options.dir,
  });
  await waitUntilReady(watchdog, {
    what: options.what,
    timeoutMs: options.readyTimeoutMs ?? 20_000,
    probe: () => options.probe({ logFile }),
  });
  const pid = findChildPid(watchdog.pid, options.command);
  if (pid === undefined) {
    await watchdog.stop();
    throw new Error(`${options.what} answered, but no child of ${watchdog.pid} runs it`);
  }
  return { pid, stop: () => watchdog.stop(), tail: (lines) => watchdog.tail(lines) };
}

/**
 * The environment without proxy settings: collectd's libcurl honours `http_proxy` and would
 * send a test's 127.0.0.1 traffic to the proxy. Strings only, as the watchdog passes it verbatim.
 */
function agentEnv(): Record<string, string> {
  return Object.fromEntries(
    Object.entries(process.env).filter(
      (entry): entry is [string, string] =>
        entry[1] !== undefined && !/^(https?|ftp|all|no)_proxy$/i.test(entry[0]),
    ),
  );
}

/**
 * The child of `parentPid` whose argv[0] is `command`. Matching the command matters: a watchdog
 * run through tsx has a second child, esbuild's service. Linux only (reads /proc).
 */
function findChildPid(parentPid: number, command: string): number | undefined {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== parentPid) continue;
      const argv0 = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0', 1)[0];
      if (argv0 === command) return Number(entry);
    } catch {
      // The process ended between readdir and read.
    }
  }
  return undefined;
}
