/**
 * Agents Debian does not package (Telegraf, the OpenTelemetry Collector) are built from their
 * pinned releases through the Go module proxy, once, into the testkit cache outside the work tree.
 */
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { cp, mkdir, mkdtemp, rename, rm } from 'node:fs/promises';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Long enough for a cold module download and compile on 2 busy cores. */
const goTimeoutMs = 20 * 60_000;

/** Where a built agent lives: `<cache>/<name>-<version>/<name>`. */
export function cachedAgentPath(name: string, version: string): string {
  const cache =
    process.env['MONITOR_TESTKIT_CACHE'] ?? join(homedir(), '.cache', 'monitor-testkit');
  return join(cache, `${name}-${version}`, name);
}

/** Runs a `go` command with the timeouts and buffers a build needs; resolves with its stdout. */
export async function runGo(
  args: string[],
  options: { cwd?: string; env?: Record<string, string> } = {},
): Promise<string> {
  const { stdout } = await execFileAsync('go', args, {
    cwd: options.cwd,
    timeout: goTimeoutMs,
    env: { ...process.env, ...options.env },
    maxBuffer: 16 * 1024 * 1024,
  });
  return stdout;
}

/**
 * The binary at `target`, built by `build` unless it is there already. Each run builds in a
 * directory of its own (`build` returns the binary it made there) and moves the result into
 * place, so an interrupted or concurrent build never leaves half a binary behind.
 */
export async function ensureBuilt(
  target: string,
  build: (workDir: string) => Promise<string>,
): Promise<string> {
  if (existsSync(target)) return target;
  await mkdir(join(homedir(), '.cache'), { recursive: true });
  const work = await mkdtemp(join(homedir(), '.cache', 'agent-build-'));
  try {
    const built = await build(work);
    await mkdir(dirname(target), { recursive: true });
    if (!existsSync(target)) await rename(built, target);
    return target;
  } finally {
    await rm(work, { recursive: true, force: true });
  }
}

/** A copy of a read-only module-cache directory that a build may write into. */
export async function writableCopy(from: string, to: string): Promise<string> {
  await cp(from, to, { recursive: true });
  await execFileAsync('chmod', ['-R', 'u+w', to]);
  return to;
}
