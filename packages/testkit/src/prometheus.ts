import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { AgentProcess } from './agent-process.js';
import { startAgentProcess } from './agent-process.js';
import { findExecutable } from './find-executable.js';
import { getFreePort } from './free-port.js';
import { createServiceDir } from './service-dir.js';

/** One scrape target; targets that share a `job` share a scrape config. */
type PrometheusScrapeTarget = {
  /** The `job` label. */
  job: string;
  /** `host:port`; Prometheus makes it the `instance` label. */
  address: string;
  /** `/metrics` when omitted. */
  metricsPath?: string;
  /** Extra target labels, on every sample scraped from it. */
  labels?: Record<string, string>;
};

/** At most one of the two: Prometheus refuses a remote_write with both. */
type RemoteWriteAuth =
  | { bearerToken: string; basicAuth?: never }
  | { basicAuth: { username: string; password: string }; bearerToken?: never }
  | { bearerToken?: never; basicAuth?: never };

export type PrometheusRemoteWrite = RemoteWriteAuth & {
  url: string;
  /**
   * Prometheus 2.42 speaks remote-write 1.0 only: `prometheus.WriteRequest`, snappy-compressed,
   * `X-Prometheus-Remote-Write-Version: 0.1.0`. `protobuf_message` (remote-write 2.0) came with
   * Prometheus 3.0, and 2.42 rejects a config that has it, so the launcher never writes it.
   */
  protobufMessage?: 'prometheus.WriteRequest';
};

export type PrometheusOptions = {
  scrapeTargets: PrometheusScrapeTarget[];
  /** Where to send what it scrapes; none when omitted. */
  remoteWrite?: PrometheusRemoteWrite;
  /**
   * A `remote_read` endpoint it queries beside its own TSDB, recent data included
   * (`read_recent: true`), with a bearer token or basic auth.
   */
  remoteRead?: RemoteWriteAuth & { url: string };
  /** `--web.enable-remote-write-receiver`: it takes remote-write at /api/v1/write itself. */
  remoteWriteReceiver?: boolean;
  /** Also the scrape timeout; 1 when omitted. */
  scrapeIntervalSeconds?: number;
  /** The interval of rule groups that set none; the scrape interval when omitted. */
  evaluationIntervalSeconds?: number;
  /** Rule files (YAML text) it loads (`rule_files`), each written to a file of its own. */
  ruleFiles?: string[];
  /** Alertmanagers it sends alerts to (API v2), as `http://host:port[/path prefix]`. */
  alertmanagerUrls?: string[];
  /** `--storage.tsdb.retention.time`, in days: how much history it keeps (15 when omitted). */
  retentionDays?: number;
  /**
   * `--enable-feature=exemplar-storage`: it keeps the exemplars it scrapes (from OpenMetrics
   * text), serves them at `query_exemplars`, and remote-writes them (`send_exemplars: true`).
   */
  exemplars?: boolean;
  /**
   * `--enable-feature=native-histograms`: it scrapes native histograms (protobuf exposition),
   * keeps and serves them, and remote-writes them (`send_native_histograms: true`).
   */
  nativeHistograms?: boolean;
};

export type RunningPrometheus = AgentProcess & {
  /** `http://127.0.0.1:<port>`: its UI and HTTP API. */
  readonly url: string;
};

/**
 * Prometheus (Debian's 2.42) on a free 127.0.0.1 port with a throwaway TSDB, scraping
 * `scrapeTargets` and sending everything to `remoteWrite.url`. Resolves once /-/ready answers,
 * which is about 5 s before the first scrape: 2.42's scrape manager applies new targets on a
 * fixed 5 s tick, so the first remote write arrives some 6 s after the start.
 */
export async function startPrometheus(options: PrometheusOptions): Promise<RunningPrometheus> {
  const command = findExecutable({
    name: 'prometheus',
    envName: 'PROMETHEUS_BIN',
    debianPath: '/usr/bin/prometheus',
    probeArgs: ['--version'],
    installHint: 'apt-get install prometheus',
  });
  const dir = createServiceDir('prometheus');
  const configFile = join(dir, 'prometheus.yml');
  const ruleFiles = (options.ruleFiles ?? []).map((text, i) => {
    const file = join(dir, `rules-${i}.yml`);
    writeFileSync(file, text);
    return file;
  });
  // JSON is YAML, and needs no quoting rules of its own.
  writeFileSync(configFile, JSON.stringify(prometheusConfig(options, ruleFiles), null, 2));
  const port = await getFreePort();
  const url = `http://127.0.0.1:${port}`;
  const agent = await startAgentProcess({
    what: 'prometheus',
    command,
    args: [
      `--config.file=${configFile}`,
      `--storage.tsdb.path=${join(dir, 'data')}`,
      `--web.listen-address=127.0.0.1:${port}`,
      // On SIGTERM it keeps sending what it queued for this long (1 min by default): a test
      // whose receiver is already gone should not wait for that.
      '--storage.remote.flush-deadline=2s',
      ...(options.remoteWriteReceiver === true ? ['--web.enable-remote-write-receiver'] : []),
      ...(options.exemplars === true ? ['--enable-feature=exemplar-storage'] : []),
      ...(options.nativeHistograms === true ? ['--enable-feature=native-histograms'] : []),
      ...(options.retentionDays === undefined
        ? []
        : [`--storage.tsdb.retention.time=${options.retentionDays}d`]),
    ],
    dir,
    probe: async () => {
      const response = await fetch(`${url}/-/ready`, { signal: AbortSignal.timeout(2_000) });
      await response.body?.cancel();
      if (!response.ok) throw new Error(`GET /-/ready answered ${response.status}`);
    },
  });
  return { ...agent, url };
}

/**
 * The prometheus.yml for `options`, its rule files at `ruleFilePaths`; exported for its unit
 * test.
 */
export function prometheusConfig(
  options: PrometheusOptions,
  ruleFilePaths: readonly string[] = [],
): Record<string, unknown> {
  const { remoteWrite, remoteRead } = options;
  if (
    remoteWrite?.protobufMessage !== undefined &&
    remoteWrite.protobufMessage !== 'prometheus.WriteRequest'
  ) {
    throw new Error(`Prometheus 2.42 cannot send ${String(remoteWrite.protobufMessage)}`);
  }
  const interval = duration(options.scrapeIntervalSeconds ?? 1);
  const evaluationInterval =
    options.evaluationIntervalSeconds === undefined
      ? interval
      : duration(options.evaluationIntervalSeconds);
  const jobs = [...new Set(options.scrapeTargets.map((target) => target.job))];
  return {
    global: {
      scrape_interval: interval,
      scrape_timeout: interval,
      evaluation_interval: evaluationInterval,
    },
    ...(ruleFilePaths.length === 0 ? {} : { rule_files: ruleFilePaths }),
    ...(options.alertmanagerUrls === undefined || options.alertmanagerUrls.length === 0
      ? {}
      : { alerting: { alertmanagers: options.alertmanagerUrls.map(alertmanagerConfig) } }),
    scrape_configs: jobs.map((job) => {
      const targets = options.scrapeTargets.filter((target) => target.job === job);
      const paths = new Set(targets.map((target) => target.metricsPath ?? '/metrics'));
      if (paths.size > 1) throw new Error(`the targets of job ${job} differ in metricsPath`);
      return {
        job_name: job,
        metrics_path: [...paths][0],
        static_configs: targets.map((target) => ({
          targets: [target.address],
          labels: target.labels ?? {},
        })),
      };
    }),
    ...(remoteRead === undefined
      ? {}
      : {
          remote_read: [
            {
              url: remoteRead.url,
              name: 'testkit',
              read_recent: true,
              ...(remoteRead.bearerToken === undefined
                ? {}
                : { authorization: { type: 'Bearer', credentials: remoteRead.bearerToken } }),
              ...(remoteRead.basicAuth === undefined ? {} : { basic_auth: remoteRead.basicAuth }),
            },
          ],
        }),
    remote_write:
      remoteWrite === undefined
        ? []
        : [
            {
              url: remoteWrite.url,
              name: 'testkit',
              ...(remoteWrite.bearerToken === undefined
                ? {}
                : { authorization: { type: 'Bearer', credentials: remoteWrite.bearerToken } }),
              ...(remoteWrite.basicAuth === undefined ? {} : { basic_auth: remoteWrite.basicAuth }),
              ...(options.exemplars === true ? { send_exemplars: true } : {}),
              ...(options.nativeHistograms === true ? { send_native_histograms: true } : {}),
              // Tests wait for data: send every second, retry a failed request within a second.
              queue_config: { batch_send_deadline: '1s', min_backoff: '100ms', max_backoff: '1s' },
            },
          ],
  };
}

/** One `alerting.alertmanagers` entry for an Alertmanager at `url`. */
function alertmanagerConfig(url: string): Record<string, unknown> {
  const parsed = new URL(url);
  const pathPrefix = parsed.pathname.replace(/\/$/, '');
  return {
    api_version: 'v2',
    scheme: parsed.protocol.replace(/:$/, ''),
    ...(pathPrefix === '' ? {} : { path_prefix: pathPrefix }),
    static_configs: [{ targets: [parsed.host] }],
  };
}

/** Prometheus' duration format has no fractions: `1.5` seconds is `1500ms`. */
function duration(seconds: number): string {
  if (!(seconds > 0)) throw new Error(`not a positive duration: ${seconds} s`);
  return `${Math.round(seconds * 1_000)}ms`;
}
