import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getFreePort } from '@monitor/testkit';
import type { BenchProcess } from './bench-process.js';
import { startHttpProcess } from './bench-process.js';
import type { Cleanup } from './harness/cleanup.js';
import { compareMetricNames } from './compare-fleet.js';
import type { CompareTarget } from './compare-target.js';
import { measuredProcess } from './compare-target.js';
import { waitForCount } from './wait-for-landed.js';

/** Debian's package (`apt-get install victoria-metrics`): the single-node server. */
export const victoriaMetricsBinary = '/usr/bin/victoria-metrics';
export const victoriaMetricsInstall = 'apt-get install victoria-metrics';

const pollIntervalMs = 200;
const requestTimeoutMs = 30_000;

/**
 * Every raw sample of the fleet's series, duplicates included: VictoriaMetrics 1.79 keeps two
 * samples with the same series and time, and count_over_time counts both. The influx import
 * names a series `<measurement>_<field>`.
 */
const storedSamplesQuery = `sum(count_over_time({__name__=~"host_(${compareMetricNames.join('|')})"}[1d]))`;

/**
 * VictoriaMetrics from `binary` on a free 127.0.0.1 port with fresh storage in a temp dir (gone
 * with the process), loaded over its InfluxDB line protocol endpoint.
 */
export async function startVictoriaMetrics(options: {
  binary: string;
  logDir: string;
  cleanup: Cleanup;
}): Promise<CompareTarget> {
  const { proc } = await startVictoriaMetricsServer({
    ...options,
    extraArgs: [
      // Counting must see what was stored, never an answer cached from the count before.
      '-search.disableCache',
      // The fleet's samples are up to an hour old; under the default (5m) every count logs a
      // warning that it resets the (disabled) rollup cache.
      '-search.cacheTimestampOffset=24h',
    ],
  });

  /** Makes what was written searchable, then counts it. */
  const countStored = async (): Promise<number> => {
    await request(`${proc.baseUrl}/internal/force_flush`);
    const query = new URLSearchParams({ query: storedSamplesQuery });
    const answer = (await request(`${proc.baseUrl}/api/v1/query?${query.toString()}`)) as {
      data?: { result?: { value?: [number, string] }[] };
    };
    return Number(answer.data?.result?.[0]?.value?.[1] ?? 0);
  };

  return {
    name: 'victoria-metrics',
    format: 'influx',
    baseUrl: proc.baseUrl,
    path: '/write?precision=ms',
    headers: { 'Content-Type': 'text/plain; charset=utf-8' },
    measured: [measuredProcess('victoria-metrics', proc)],
    logged: [proc],
    waitForStored: (args) => waitForCount(countStored, { ...args, pollIntervalMs }),
    stop: () => proc.stop(),
  };
}

/**
 * The VictoriaMetrics server alone, with its storage dir (a temp dir, gone with the process):
 * for benchmarks that load it their own way or measure its files.
 */
export async function startVictoriaMetricsServer(options: {
  binary: string;
  logDir: string;
  cleanup: Cleanup;
  extraArgs?: string[];
}): Promise<{ proc: BenchProcess; storageDir: string }> {
  const storageDir = mkdtempSync(join(tmpdir(), 'monitor-bench-victoria-metrics-'));
  const port = await getFreePort();
  const proc = await startHttpProcess({
    name: 'victoria-metrics',
    command: options.binary,
    args: [
      `-storageDataPath=${storageDir}`,
      `-httpListenAddr=127.0.0.1:${port}`,
      // JSON lines, so the report's scan of the log sees levels instead of flagging every line.
      '-loggerFormat=json',
      ...(options.extraArgs ?? []),
    ],
    cwd: storageDir,
    env: { PATH: process.env['PATH'] ?? '' },
    logDir: options.logDir,
    removeOnExit: storageDir,
    port,
    readyPath: '/health',
  });
  options.cleanup.add('victoria-metrics', () => proc.stop());
  return { proc, storageDir };
}

/** The installed Debian package's version, or undefined when dpkg does not know it. */
export function victoriaMetricsVersion(binary: string): string | undefined {
  if (!existsSync(binary)) return undefined;
  try {
    // The Debian build prints no version of its own (-version is empty).
    return execFileSync('dpkg-query', ['-W', '-f', '${Version}', 'victoria-metrics'], {
      encoding: 'utf8',
      timeout: 10_000,
    }).trim();
  } catch {
    return undefined;
  }
}

async function request(url: string): Promise<unknown> {
  const response = await fetch(url, { signal: AbortSignal.timeout(requestTimeoutMs) });
  const text = await response.text();
  if (!response.ok) throw new Error(`GET ${url}: ${response.status} ${text.slice(0, 300)}`);
  return text === '' ? undefined : (JSON.parse(text) as unknown);
}
