import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentProcess } from './agent-process.js';
import { startAgentProcess } from './agent-process.js';
import { findExecutable } from './find-executable.js';
import { getFreePort } from './free-port.js';
import type { HttpReceiver } from './notification-receivers.js';
import { createServiceDir } from './service-dir.js';

export type AlertmanagerOptions = {
  /** Its one receiver: a webhook (`send_resolved`) that gets every group notification. */
  webhookUrl: string;
  /** Labels alerts are grouped by; `['alertname']` when omitted. */
  groupBy?: string[];
  /** `group_wait`, also `group_interval`: how long it gathers alerts of a group (1 s by default). */
  groupWaitSeconds?: number;
  /** Listen on this port (a restart keeps its address); a free one when omitted. */
  port?: number;
};

/** One alert of Alertmanager's webhook message (version 4). */
type AlertmanagerWebhookAlert = {
  status: 'firing' | 'resolved';
  labels: Record<string, string>;
  annotations: Record<string, string>;
  startsAt: string;
  endsAt: string;
  generatorURL: string;
};

/** The group notification Alertmanager's webhook receiver gets. */
type AlertmanagerWebhookMessage = {
  status: 'firing' | 'resolved';
  groupLabels: Record<string, string>;
  alerts: AlertmanagerWebhookAlert[];
};

/** The group notifications `receiver`, an Alertmanager's webhook, got so far, in arrival order. */
export function alertmanagerMessages(receiver: HttpReceiver): AlertmanagerWebhookMessage[] {
  return receiver.requests.map(
    (request) => JSON.parse(request.body.toString()) as AlertmanagerWebhookMessage,
  );
}

export type RunningAlertmanager = AgentProcess & {
  /** `http://127.0.0.1:<port>`: its API (`/api/v2/alerts`). */
  readonly url: string;
  readonly port: number;
};

/**
 * Alertmanager (Debian's 0.25) on 127.0.0.1 with a throwaway data dir, gossip off, routing
 * every alert to `webhookUrl`. Resolves once /-/ready answers. Like a real restart, a new one on
 * the same port knows no alerts: Alertmanager keeps them in memory only.
 */
export async function startAlertmanager(
  options: AlertmanagerOptions,
): Promise<RunningAlertmanager> {
  const command = findExecutable({
    name: 'prometheus-alertmanager',
    envName: 'ALERTMANAGER_BIN',
    debianPath: '/usr/bin/prometheus-alertmanager',
    probeArgs: ['--version'],
    installHint: 'apt-get install prometheus-alertmanager',
  });
  const dir = createServiceDir('alertmanager');
  const configFile = join(dir, 'alertmanager.yml');
  // JSON is YAML, and needs no quoting rules of its own.
  writeFileSync(configFile, JSON.stringify(alertmanagerConfig(options), null, 2));
  const port = options.port ?? (await getFreePort());
  const url = `http://127.0.0.1:${port}`;
  const agent = await startAgentProcess({
    what: 'alertmanager',
    command,
    args: [
      `--config.file=${configFile}`,
      `--storage.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      // Empty: no cluster, so no gossip port (9094 on every interface by default).
      '--cluster.listen-address=',
    ],
    dir,
    probe: async () => {
      const response = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(2_000) });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`GET /-/ready answered ${response.status}`);
    },
  });
  return { ...agent, url, port };
}

/** The alertmanager.yml for `options`; exported for its unit test. */
export function alertmanagerConfig(options: AlertmanagerOptions): Record<string, unknown> {
  const wait = `${options.groupWaitSeconds ?? 1}s`;
  return {
    route: {
      receiver: 'test',
      group_by: options.groupBy ?? ['alertname'],
      group_wait: wait,
      group_interval: wait,
      repeat_interval: '1h',
    },
    receivers: [
      {
        name: 'test',
        webhook_configs: [{ url: options.webhookUrl, send_resolved: true, max_alerts: 0 }],
      },
    ],
  };
}
