/**
 * The OpenTelemetry Collector, relaying OTLP to the gateway as docs/agents.md's `otlphttp` block
 * says. Debian does not package it; the upstream way to get one is its builder (`ocb`), which
 * generates a distribution with the components a manifest names and compiles it: here the OTLP
 * receiver, the batch processor and the OTLP/HTTP exporter, pinned, built once into the testkit
 * cache (`npm run services -- prepare-otelcol`, a few minutes on 2 cores).
 */
import { existsSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Command } from 'commander';
import type { AgentProcess } from './agent-process.js';
import { startAgentProcess } from './agent-process.js';
import { getFreePort } from './free-port.js';
import { cachedAgentPath, ensureBuilt, runGo } from './go-build.js';
import { createServiceDir } from './service-dir.js';

/** Pinned: the Collector docs/agents.md's exporter block was tried with. */
const collectorVersion = '0.165.0';

function binaryPath(): string {
  return cachedAgentPath('otelcol', `v${collectorVersion}`);
}

/** The builder's manifest: the fewest components that relay OTLP metrics. */
function builderManifest(outputPath: string): string {
  const module = (path: string): string =>
    `  - gomod: go.opentelemetry.io/collector/${path} v${collectorVersion}`;
  return [
    'dist:',
    '  name: otelcol',
    '  description: OpenTelemetry Collector for the monitoring service tests',
    `  output_path: ${JSON.stringify(outputPath)}`,
    'receivers:',
    module('receiver/otlpreceiver'),
    'processors:',
    module('processor/batchprocessor'),
    'exporters:',
    module('exporter/otlphttpexporter'),
    '',
  ].join('\n');
}

/** Builds the pinned Collector unless it is there already. Needs `go` (1.24 or newer). */
async function ensureCollector(log: (line: string) => void): Promise<string> {
  return ensureBuilt(binaryPath(), async (work) => {
    const manifest = join(work, 'manifest.yaml');
    const output = join(work, 'dist');
    writeFileSync(manifest, builderManifest(output));
    log(`building the OpenTelemetry Collector v${collectorVersion} with its builder`);
    await runGo(
      [
        'run',
        `go.opentelemetry.io/collector/cmd/builder@v${collectorVersion}`,
        '--config',
        manifest,
      ],
      { cwd: work },
    );
    return join(output, 'otelcol');
  });
}

/** The CLI's `prepare-otelcol` command. */
export function addCollectorCommand(program: Command): void {
  program
    .command('prepare-otelcol')
    .description(
      `build the OpenTelemetry Collector v${collectorVersion} (Go module proxy) for the OTLP test`,
    )
    .action(async () => {
      const binary = await ensureCollector((line) => process.stderr.write(`${line}\n`));
      process.stdout.write(`otelcol v${collectorVersion}: ${binary}\n`);
    });
}

export type CollectorOptions = {
  /** The exporter's endpoint, as docs/agents.md has it: `http://127.0.0.1:8080/api/v1/otlp`. */
  endpoint: string;
  key: string;
};

export type CollectorProcess = AgentProcess & {
  /** Where its OTLP receiver takes metrics over HTTP: `<url>/v1/metrics`. */
  readonly otlpHttpUrl: string;
};

/** The Collector's configuration: OTLP/HTTP receiver, batching, docs/agents.md's exporter. */
function collectorConfig(options: CollectorOptions, receiverPort: number): string {
  const quote = (value: string): string => JSON.stringify(value);
  return [
    'receivers:',
    '  otlp:',
    '    protocols:',
    '      http:',
    `        endpoint: 127.0.0.1:${receiverPort}`,
    'processors:',
    '  batch:',
    '    timeout: 200ms',
    'exporters:',
    '  otlphttp:',
    `    endpoint: ${quote(options.endpoint)}`,
    '    headers:',
    `      Authorization: ${quote(`Bearer ${options.key}`)}`,
    'service:',
    '  telemetry:',
    '    metrics:',
    '      level: none',
    '  pipelines:',
    '    metrics:',
    '      receivers: [otlp]',
    '      processors: [batch]',
    '      exporters: [otlphttp]',
    '',
  ].join('\n');
}

/** The Collector in the foreground; `prepare-otelcol` must have run. */
export async function startCollector(options: CollectorOptions): Promise<CollectorProcess> {
  const command = binaryPath();
  if (!existsSync(command)) {
    throw new Error(`no collector at ${command}: run npm run services -- prepare-otelcol`);
  }
  const dir = createServiceDir('otelcol');
  const port = await getFreePort();
  const configFile = join(dir, 'otelcol.yaml');
  writeFileSync(configFile, collectorConfig(options, port));
  const agent = await startAgentProcess({
    what: 'otelcol',
    command,
    args: ['--config', `file:${configFile}`],
    dir,
    probe: async ({ logFile }) => {
      const log = await readFile(logFile, 'utf8');
      if (!log.includes('Everything is ready')) throw new Error('the collector is not ready yet');
    },
  });
  return { ...agent, otlpHttpUrl: `http://127.0.0.1:${port}` };
}
