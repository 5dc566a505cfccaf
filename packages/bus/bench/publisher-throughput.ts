/**
 * Throughput of the batching publisher against a real broker: N small messages published by C
 * concurrent callers (each awaits its publish before the next, like HTTP requests waiting for
 * their 200), for a few publisher settings.
 *
 *   KAFKA_BROKERS=127.0.0.1:9092 npx tsx --conditions=development packages/bus/bench/publisher-throughput.ts
 *
 * Options (env): MESSAGES (100000), CALLERS (200), VALUE_BYTES (100), PARTITIONS (3).
 */
import { createLogger } from '@monitor/platform';
import type { PublisherOptions } from '../src/index.js';
import { createKafkaBus } from '../src/index.js';

const brokers = (process.env['KAFKA_BROKERS'] ?? '').split(',').filter((broker) => broker !== '');
if (brokers.length === 0) {
  process.stderr.write('set KAFKA_BROKERS=host:port\n');
  process.exit(1);
}
const messages = Number(process.env['MESSAGES'] ?? 100_000);
const callers = Number(process.env['CALLERS'] ?? 200);
const valueBytes = Number(process.env['VALUE_BYTES'] ?? 100);
const partitions = Number(process.env['PARTITIONS'] ?? 3);

const scenarios: { name: string; options: PublisherOptions; messages?: number }[] = [
  {
    name: 'one message per request (maxBatchMessages 1)',
    options: { maxBatchMessages: 1 },
    messages: Math.min(messages, 5_000),
  },
  { name: 'lingerMs 1 (default)', options: {} },
  { name: 'lingerMs 5', options: { lingerMs: 5 } },
  { name: 'lingerMs 20', options: { lingerMs: 20 } },
];

const logger = createLogger({ level: 'warn' });
const bus = createKafkaBus({ brokers, clientId: 'bench', logger });
const value = Buffer.alloc(valueBytes, 'x');
const results = [];
for (const scenario of scenarios) {
  const topic = `bench-publisher-${Date.now()}`;
  await bus.admin.ensureTopic(topic, { partitions, replicationFactor: 1 });
  const publisher = bus.publisher(scenario.options);
  // Warm up: connection, producer id, metadata.
  await publisher.publish(topic, [{ key: 'warmup', value }]);
  const total = scenario.messages ?? messages;
  let next = 0;
  const latenciesMs: number[] = [];
  const started = performance.now();
  await Promise.all(
    Array.from({ length: callers }, async () => {
      while (next < total) {
        const id = next++;
        const t = performance.now();
        await publisher.publish(topic, [{ key: `host-${id % 1000}`, value }]);
        latenciesMs.push(performance.now() - t);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await publisher.close();
  latenciesMs.sort((a, b) => a - b);
  const at = (q: number): number =>
    Math.round((latenciesMs[Math.floor(q * (latenciesMs.length - 1))] ?? 0) * 10) / 10;
  const result = {
    scenario: scenario.name,
    messages: total,
    callers,
    valueBytes,
    partitions,
    messagesPerSecond: Math.round(total / seconds),
    p50Ms: at(0.5),
    p99Ms: at(0.99),
  };
  results.push(result);
  process.stdout.write(`${JSON.stringify(result)}\n`);
}
await bus.close();
