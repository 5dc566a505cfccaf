/**
 * A program of ours instrumented with the Prometheus Go client library, exposing native
 * histograms (`go/native-histogram-exporter`): built once per version of its source into the
 * testkit cache (its modules through the Go module proxy, pinned by its go.sum), then run on a
 * free 127.0.0.1 port for Prometheus to scrape.
 */
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import type { AgentProcess } from './agent-process.js';
import { startAgentProcess } from './agent-process.js';
import { getFreePort } from './free-port.js';
import { cachedAgentPath, ensureBuilt, runGo, writableCopy } from './go-build.js';
import { createServiceDir } from './service-dir.js';

const sourceDir = fileURLToPath(new URL('../go/native-histogram-exporter/', import.meta.url));
const sourceFiles = ['main.go', 'go.mod', 'go.sum'];

/** The binary of this source, built unless it is there already (needs `go` 1.26). */
async function ensureExporter(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of sourceFiles) hash.update(readFileSync(join(sourceDir, file)));
  const version = hash.digest('hex').slice(0, 12);
  return ensureBuilt(cachedAgentPath('native-histogram-exporter', version), async (work) => {
    const source = await writableCopy(sourceDir, join(work, 'source'));
    const binary = join(work, 'native-histogram-exporter');
    await runGo(['build', '-o', binary, '.'], { cwd: source });
    return binary;
  });
}

/** The CLI's `prepare-native-histogram-exporter` command: the build, ahead of the tests. */
export function addNativeHistogramExporterCommand(program: Command): void {
  program
    .command('prepare-native-histogram-exporter')
    .description('build the native-histogram exporter (Go client library, Go module proxy)')
    .action(async () => {
      process.stdout.write(`native-histogram exporter: ${await ensureExporter()}\n`);
    });
}

export type NativeHistogramExporter = AgentProcess & {
  /** `127.0.0.1:<port>`, serving `/metrics`. */
  readonly address: string;
};

/**
 * The exporter, observing on its own from its start: `checkout_latency_seconds{route}` (bucket
 * factor 1.1, schema 3) and `temperature_change_celsius` (factor 1.5, values of either sign, a
 * zero bucket of ±0.01).
 */
export async function startNativeHistogramExporter(): Promise<NativeHistogramExporter> {
  const command = await ensureExporter();
  const port = await getFreePort();
  const address = `127.0.0.1:${port}`;
  const agent = await startAgentProcess({
    what: 'native-histogram-exporter',
    command,
    args: [`-listen=${address}`],
    dir: createServiceDir('native-histogram-exporter'),
    probe: async () => {
      const response = await fetch(`http://${address}/metrics`, {
        signal: AbortSignal.timeout(2_000),
      });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`GET /metrics answered ${response.status}`);
    },
  });
  return { ...agent, address };
}
