import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { getFreePort } from '@monitor/testkit';

const mainScript = fileURLToPath(new URL('../main.ts', import.meta.url));

export type RoleProcess = {
  readonly pid: number;
  readonly port: number;
  readonly baseUrl: string;
  /** Everything the process wrote so far (JSON log lines), for assertions and failure output. */
  output(): string;
  /** How it ended (`code 1`, `SIGKILL`), or undefined while it runs. */
  ended(): string | undefined;
  /** SIGTERM and wait for a graceful exit; resolves with the exit code. */
  stop(): Promise<number | null>;
  /** Sends a signal while it runs, without waiting: for signals that come twice. */
  signal(name: NodeJS.Signals): void;
  /** Resolves with the exit code once it has exited (null when a signal ended it). */
  exited(): Promise<number | null>;
  /** SIGKILL, as a crash would; resolves once the process is gone. */
  kill(): Promise<void>;
};

/**
 * Runs `monitor <command>` from source in its own process, as production does from the image,
 * and waits until its /healthz answers (or, for one-shot commands, use `runCommand`).
 */
export async function startRoleProcess(
  role: string,
  env: Record<string, string>,
  options: { readyTimeoutMs?: number } = {},
): Promise<RoleProcess> {
  const port = await getFreePort();
  const child = spawnMonitor([role], { ...env, PORT: String(port) });
  const baseUrl = `http://127.0.0.1:${port}`;
  const handle = wrap(child, port, baseUrl);
  const deadline = Date.now() + (options.readyTimeoutMs ?? 60_000);
  for (;;) {
    if (child.exitCode !== null) {
      throw new Error(
        `monitor ${role} exited with ${child.exitCode} before it was ready:\n${handle.output()}`,
      );
    }
    try {
      const response = await fetch(`${baseUrl}/healthz`);
      if (response.ok) return handle;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      await handle.kill();
      throw new Error(`monitor ${role} was not ready in time:\n${handle.output()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** Runs a one-shot command (`migrate`, `keys create …`) and returns its stdout. */
export async function runCommand(args: string[], env: Record<string, string>): Promise<string> {
  const { code, stdout, stderr } = await runMonitor(args, env);
  if (code !== 0)
    throw new Error(`monitor ${args.join(' ')} exited with ${code}:\n${stderr}${stdout}`);
  return stdout;
}

/** Runs `monitor <args>` to its end, whatever the outcome: for commands expected to fail. */
export async function runMonitor(
  args: string[],
  env: Record<string, string>,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const child = spawnMonitor(args, env);
  let stdout = '';
  let stderr = '';
  child.stdout?.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  return { code, stdout, stderr };
}

function spawnMonitor(args: string[], env: Record<string, string>): ChildProcess {
  return spawn(
    process.execPath,
    ['--import', 'tsx', '--conditions=development', mainScript, ...args],
    {
      env: { PATH: process.env['PATH'] ?? '', LOG_LEVEL: 'info', ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
}

function wrap(child: ChildProcess, port: number, baseUrl: string): RoleProcess {
  let output = '';
  const collect = (chunk: Buffer): void => {
    output += chunk.toString();
    if (output.length > 2_000_000) output = output.slice(-1_000_000);
  };
  child.stdout?.on('data', collect);
  child.stderr?.on('data', collect);
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  if (child.pid === undefined) throw new Error('could not start the monitor process');
  const pid = child.pid;
  return {
    pid,
    port,
    baseUrl,
    output: () => output,
    ended: () =>
      child.exitCode !== null ? `code ${child.exitCode}` : (child.signalCode ?? undefined),
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      return exited;
    },
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await exited;
    },
    signal(name) {
      if (child.exitCode === null && child.signalCode === null) child.kill(name);
    },
    exited: () => exited,
  };
}
