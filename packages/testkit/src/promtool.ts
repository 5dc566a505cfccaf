import { execFile } from 'node:child_process';
import { findExecutable } from './find-executable.js';

/** What one promtool run printed, and its exit code (0 accepts). */
export type PromtoolResult = { exitCode: number; stdout: string; stderr: string };

/**
 * Runs Prometheus' promtool (Debian's `prometheus` package, or $PROMTOOL_BIN) with `args`,
 * in `cwd`; resolves with its exit code rather than rejecting on a refusal.
 */
export async function runPromtool(args: readonly string[], cwd: string): Promise<PromtoolResult> {
  const command = findExecutable({
    name: 'promtool',
    envName: 'PROMTOOL_BIN',
    debianPath: '/usr/bin/promtool',
    probeArgs: ['--version'],
    installHint: 'apt-get install prometheus',
  });
  return new Promise((resolve, reject) => {
    execFile(command, [...args], { cwd, maxBuffer: 64 * 1024 * 1024 }, (error, stdout, stderr) => {
      if (error !== null && typeof error.code !== 'number') {
        reject(new Error(`promtool did not run: ${error.message}`, { cause: error }));
        return;
      }
      resolve({ exitCode: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
    });
  });
}
