import type { SubscribeOptions } from '@monitor/bus';
import { Gauge } from 'prom-client';
import type { Registry } from 'prom-client';

const lagMetricName = 'consumer_lag_records';

/**
 * The `onLag` callback of a consumer group: one gauge per registry shared by every group of the
 * process (role `all` runs the writer and the evaluator side by side), labelled by group.
 */
export function createLagGauge(
  registry: Registry,
  groupId: string,
): NonNullable<SubscribeOptions['onLag']> {
  const gauge =
    (registry.getSingleMetric(lagMetricName) as Gauge | undefined) ??
    new Gauge({
      name: lagMetricName,
      help: 'Records of a partition not yet processed by this consumer group, after its last batch.',
      labelNames: ['group', 'topic', 'partition'],
      registers: [registry],
    });
  return ({ topic, partition, records }) =>
    gauge.set({ group: groupId, topic, partition: String(partition) }, records);
}
