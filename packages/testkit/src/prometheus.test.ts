import { describe, expect, it } from 'vitest';
import { prometheusConfig } from './prometheus.js';

describe('prometheusConfig', () => {
  const remoteWrite = { url: 'http://127.0.0.1:9/api/v1/write' };

  it('makes one scrape config per job, with the interval as the timeout too', () => {
    const config = prometheusConfig({
      scrapeTargets: [
        { job: 'node', address: '127.0.0.1:1' },
        { job: 'app', address: '127.0.0.1:2', metricsPath: '/prom', labels: { env: 'test' } },
        { job: 'node', address: '127.0.0.1:3' },
      ],
      remoteWrite,
      scrapeIntervalSeconds: 1.5,
    });
    expect(config['global']).toEqual({
      scrape_interval: '1500ms',
      scrape_timeout: '1500ms',
      evaluation_interval: '1500ms',
    });
    expect(config['scrape_configs']).toEqual([
      {
        job_name: 'node',
        metrics_path: '/metrics',
        static_configs: [
          { targets: ['127.0.0.1:1'], labels: {} },
          { targets: ['127.0.0.1:3'], labels: {} },
        ],
      },
      {
        job_name: 'app',
        metrics_path: '/prom',
        static_configs: [{ targets: ['127.0.0.1:2'], labels: { env: 'test' } }],
      },
    ]);
  });

  it('sends a bearer token in an authorization block', () => {
    const config = prometheusConfig({
      scrapeTargets: [],
      remoteWrite: { ...remoteWrite, bearerToken: 'secret' },
    });
    expect(config['remote_write']).toEqual([
      expect.objectContaining({
        url: remoteWrite.url,
        authorization: { type: 'Bearer', credentials: 'secret' },
        queue_config: { batch_send_deadline: '1s', min_backoff: '100ms', max_backoff: '1s' },
      }),
    ]);
  });

  it('sends basic auth, and no protobuf_message, which 2.42 would reject', () => {
    const config = prometheusConfig({
      scrapeTargets: [],
      remoteWrite: {
        ...remoteWrite,
        basicAuth: { username: 'u', password: 'p' },
        protobufMessage: 'prometheus.WriteRequest',
      },
    });
    const [write] = config['remote_write'] as Record<string, unknown>[];
    expect(write).toMatchObject({ basic_auth: { username: 'u', password: 'p' } });
    expect(write).not.toHaveProperty('authorization');
    expect(write).not.toHaveProperty('protobuf_message');
  });

  it('refuses remote-write 2.0, which 2.42 cannot send', () => {
    const remoteWrite2 = { ...remoteWrite, protobufMessage: 'io.prometheus.write.v2.Request' };
    expect(() =>
      prometheusConfig({
        scrapeTargets: [],
        // @ts-expect-error: the type allows remote-write 1.0 only; this is the runtime guard.
        remoteWrite: remoteWrite2,
      }),
    ).toThrow(/cannot send io\.prometheus\.write\.v2\.Request/);
  });

  it('loads rule files at an evaluation interval of their own, and sends alerts to Alertmanagers', () => {
    const config = prometheusConfig(
      {
        scrapeTargets: [],
        evaluationIntervalSeconds: 2,
        alertmanagerUrls: ['http://127.0.0.1:9093', 'http://127.0.0.1:4000/hook/'],
      },
      ['/tmp/rules-0.yml'],
    );
    expect(config['global']).toMatchObject({
      scrape_interval: '1000ms',
      evaluation_interval: '2000ms',
    });
    expect(config['rule_files']).toEqual(['/tmp/rules-0.yml']);
    expect(config['alerting']).toEqual({
      alertmanagers: [
        { api_version: 'v2', scheme: 'http', static_configs: [{ targets: ['127.0.0.1:9093'] }] },
        {
          api_version: 'v2',
          scheme: 'http',
          path_prefix: '/hook',
          static_configs: [{ targets: ['127.0.0.1:4000'] }],
        },
      ],
    });
  });

  it('refuses targets of one job with different paths', () => {
    expect(() =>
      prometheusConfig({
        scrapeTargets: [
          { job: 'j', address: 'a:1' },
          { job: 'j', address: 'b:1', metricsPath: '/other' },
        ],
        remoteWrite,
      }),
    ).toThrow(/job j differ in metricsPath/);
  });
});
