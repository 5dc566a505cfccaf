import type { AgentProcess } from './agent-process.js';
import { startAgentProcess } from './agent-process.js';
import { findExecutable } from './find-executable.js';
import { getFreePort } from './free-port.js';
import { createServiceDir } from './service-dir.js';

export type RunningNodeExporter = AgentProcess & {
  /** `127.0.0.1:<port>`: what a Prometheus scrape config names, and its `instance` label. */
  readonly address: string;
  /** `http://127.0.0.1:<port>/metrics` */
  readonly metricsUrl: string;
};

/**
 * Prometheus' node exporter (Debian's prometheus-node-exporter) on a free 127.0.0.1 port with
 * its default collectors, but for systemd: Debian turns that one on, and without systemd's D-Bus
 * it logs an error on every scrape. Resolves once /metrics answers.
 */
export async function startNodeExporter(): Promise<RunningNodeExporter> {
  const command = findExecutable({
    name: 'prometheus-node-exporter',
    envName: 'NODE_EXPORTER_BIN',
    debianPath: '/usr/bin/prometheus-node-exporter',
    probeArgs: ['--version'],
    installHint: 'apt-get install prometheus-node-exporter',
  });
  const port = await getFreePort();
  const address = `127.0.0.1:${port}`;
  const metricsUrl = `http://${address}/metrics`;
  const agent = await startAgentProcess({
    what: 'node-exporter',
    command,
    args: [`--web.listen-address=${address}`, '--no-collector.systemd'],
    dir: createServiceDir('node-exporter'),
    probe: async () => {
      const response = await fetch(metricsUrl, { signal: AbortSignal.timeout(2_000) });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`GET /metrics answered ${response.status}`);
    },
  });
  return { ...agent, address, metricsUrl };
}
