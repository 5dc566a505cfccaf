import { describe, expect, it } from 'vitest';
import { ruleGroupSampleMessages, ruleSeriesHost } from './rule-group-samples.js';

describe('ruleGroupSampleMessages', () => {
  it('writes recorded series and ALERTS with their labels under the rules’ own service, stale ones as markers', () => {
    const messages = ruleGroupSampleMessages(
      'org_1',
      {
        samples: [
          { labels: { __name__: 'job:up:sum', job: 'node' }, value: 3 },
          { labels: { __name__: 'instance:cpu', instance: 'web-1:9100', job: 'node' }, value: 0.5 },
          { labels: { __name__: 'instance:mem', job: 'node', instance: 'web-1:9100' }, value: 7 },
          {
            labels: { __name__: 'ALERTS', alertname: 'Down', alertstate: 'firing', host: 'db' },
            value: 1,
          },
        ],
        staleSeries: [{ __name__: 'instance:cpu', instance: 'web-2:9100', job: 'node' }],
      },
      60_000,
      61_000,
    );
    const common = {
      v: 1,
      org_id: 'org_1',
      time_ms: 60_000,
      received_ms: 61_000,
      tags_label_series: true,
      containers: [],
      processes: [],
    };
    expect(messages).toEqual([
      { ...common, host: ruleSeriesHost, metrics: { 'job:up:sum': 3 }, tags: { job: 'node' } },
      {
        ...common,
        host: ruleSeriesHost,
        metrics: { 'instance:cpu': 0.5, 'instance:mem': 7 },
        tags: { instance: 'web-1:9100', job: 'node' },
      },
      {
        ...common,
        host: ruleSeriesHost,
        metrics: { ALERTS: 1 },
        tags: { alertname: 'Down', alertstate: 'firing', host: 'db' },
      },
      {
        ...common,
        host: ruleSeriesHost,
        metrics: {},
        stale_metrics: ['instance:cpu'],
        tags: { instance: 'web-2:9100', job: 'node' },
      },
    ]);
  });

  it('writes a recorded native histogram as a float histogram of its series', () => {
    const histogram = {
      schema: 1,
      zeroThreshold: 0.001,
      zeroCount: 0.5,
      count: 2.5,
      sum: 1.25,
      positiveSpans: [{ offset: 0, length: 1 }],
      positiveBuckets: [2],
      negativeSpans: [],
      negativeBuckets: [],
    };
    const [message] = ruleGroupSampleMessages(
      'org_1',
      {
        samples: [{ labels: { __name__: 'job:latency:rate', job: 'api' }, value: 0, histogram }],
        staleSeries: [],
      },
      60_000,
      61_000,
    );
    expect(message).toMatchObject({
      metrics: {},
      histograms: {
        'job:latency:rate': {
          ...histogram,
          integer: false,
          counterResetHint: 'unknown',
          customValues: [],
        },
      },
      tags: { job: 'api' },
    });
  });
});
