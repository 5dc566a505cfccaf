import { Registry } from 'prom-client';
import { describe, expect, it } from 'vitest';
import { createConsumerLagReporter } from './consumer-lag.js';

async function lagSeconds(registry: Registry): Promise<Record<string, number>> {
  const metric = registry.getSingleMetric('consumer_lag_seconds');
  const { values } = (await metric?.get()) ?? { values: [] };
  return Object.fromEntries(values.map((v) => [String(v.labels['group']), v.value]));
}

async function lagRecords(registry: Registry): Promise<string[]> {
  const metric = registry.getSingleMetric('consumer_lag_records');
  const { values } = (await metric?.get()) ?? { values: [] };
  return values.map((v) => `${v.labels['group']}/${v.labels['partition']}=${v.value}`).sort();
}

describe('createConsumerLagReporter', () => {
  it('reports per group the age of the last record handled on the partition furthest behind', async () => {
    const registry = new Registry();
    let now = 100_000;
    const first = createConsumerLagReporter(registry, 'writer', () => now);
    const second = createConsumerLagReporter(registry, 'writer', () => now);
    const evaluator = createConsumerLagReporter(registry, 'evaluator', () => now);
    first.onLag({ topic: 't', partition: 0, records: 500, lastTimestampMs: 96_000 });
    second.onLag({ topic: 't', partition: 1, records: 20, lastTimestampMs: 91_000 });
    evaluator.onLag({ topic: 't', partition: 0, records: 0, lastTimestampMs: 50_000 });
    expect(await lagSeconds(registry)).toEqual({ writer: 9, evaluator: 0 });
    // Growing while nothing moves: the scrape computes it.
    now = 103_000;
    expect(await lagSeconds(registry)).toEqual({ writer: 12, evaluator: 0 });
    second.onLag({ topic: 't', partition: 1, records: 0, lastTimestampMs: 102_000 });
    expect(await lagSeconds(registry)).toEqual({ writer: 7, evaluator: 0 });
    expect(await lagRecords(registry)).toEqual(['evaluator/0=0', 'writer/0=500', 'writer/1=0']);
  });

  it('forgets the partitions a rebalance took away', async () => {
    const registry = new Registry();
    const reporter = createConsumerLagReporter(registry, 'writer', () => 10_000);
    reporter.onAssignment([
      { topic: 't', partition: 0 },
      { topic: 't', partition: 1 },
    ]);
    reporter.onLag({ topic: 't', partition: 0, records: 5, lastTimestampMs: 4_000 });
    reporter.onLag({ topic: 't', partition: 1, records: 5, lastTimestampMs: 8_000 });
    reporter.onAssignment([{ topic: 't', partition: 1 }]);
    expect(await lagSeconds(registry)).toEqual({ writer: 2 });
    expect(await lagRecords(registry)).toEqual(['writer/1=5']);
    reporter.onAssignment([]);
    expect(await lagSeconds(registry)).toEqual({ writer: 0 });
    expect(await lagRecords(registry)).toEqual([]);
  });
});
