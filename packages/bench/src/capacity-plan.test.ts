import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import type { CapacityCosts } from './capacity-plan.js';
import { parseCapacityCosts, planCapacity, predictBenchThroughput } from './capacity-plan.js';

const costs = parseCapacityCosts(
  JSON.parse(readFileSync(new URL('../../../docs/capacity-costs.json', import.meta.url), 'utf8')),
);

const fleet = {
  hosts: 10_000,
  metricsPerHost: 100,
  intervalSeconds: 15,
  retentionDays: 30,
  rules: 100,
  hostsPerRequest: 1,
};

describe('the capacity costs', () => {
  it('reproduce the latest recorded bench:compare figure for its 2-core machine within the tolerance', () => {
    expect(costs.check.cores).toBe(2);
    const predicted = predictBenchThroughput(costs);
    const error = Math.abs(predicted / costs.check.samplesPerSecond - 1);
    expect(error).toBeLessThanOrEqual(costs.check.tolerance);
    expect(costs.check.tolerance).toBeLessThanOrEqual(0.25);
  });

  it('name the benchmark, machine and date of every figure', () => {
    for (const figure of Object.values(costs.figures)) {
      expect(figure.bench).toMatch(/^bench:/);
      expect(figure.date).toMatch(/^2\d{3}-\d{2}-\d{2}/);
      expect(figure.machine).not.toBe('');
    }
  });

  it('refuses a figure without its source', () => {
    const broken = structuredClone(costs) as { figures: Record<string, { source?: string }> };
    delete broken.figures['writerCpuUsPerRow']?.source;
    expect(() => parseCapacityCosts(broken)).toThrow(/writerCpuUsPerRow needs its source/);
  });
});

describe('planCapacity', () => {
  it('scales every role with the samples per second', () => {
    const small = planCapacity(fleet, costs);
    const large = planCapacity({ ...fleet, hosts: 100_000 }, costs);
    expect(small.samplesPerSecond).toBeCloseTo(66_666.7, 1);
    expect(large.samplesPerSecond).toBeCloseTo(10 * small.samplesPerSecond, 6);
    for (const role of ['gateway', 'writer', 'evaluator', 'database'] as const)
      expect(large[role].cores).toBeCloseTo(10 * small[role].cores, 6);
    expect(large.database.diskGB).toBeCloseTo(10 * small.database.diskGB, 6);
  });

  it('costs the gateway per request and per sample, as measured', () => {
    const plan = planCapacity(fleet, costs);
    const f = costs.figures;
    const expectedUs =
      (fleet.hosts / fleet.intervalSeconds) *
      (f.gatewayCpuUsPerRequest.value + fleet.metricsPerHost * f.gatewayCpuUsPerSample.value);
    expect(plan.gateway.cores).toBeCloseTo(expectedUs / 1e6, 9);
    expect(plan.gateway.replicas).toBe(Math.max(2, Math.ceil(plan.gateway.cores / 0.7)));
  });

  it('keeps two replicas of each role and room for twice the consumers in the partitions', () => {
    const tiny = planCapacity({ ...fleet, hosts: 10 }, costs);
    expect([tiny.gateway.replicas, tiny.writer.replicas, tiny.evaluator.replicas]).toEqual([
      2, 2, 2,
    ]);
    // Two writers of two consumers each, twice over.
    expect(tiny.kafka.partitions).toBe(8);
    expect(tiny.kafka.brokers).toBe(3);
    const big = planCapacity({ ...fleet, hosts: 1_000_000 }, costs);
    expect(big.kafka.partitions).toBe(
      2 * Math.max(2 * big.writer.replicas, big.evaluator.replicas),
    );
  });

  it('evaluates each sample against the rules of its metric', () => {
    const plan = planCapacity({ ...fleet, rules: 1_000 }, costs);
    expect(plan.evaluationsPerSecond).toBeCloseTo(plan.samplesPerSecond * 10, 6);
  });

  it('shortens the chunk interval until the chunk being written fits a quarter of memory', () => {
    const plan = planCapacity({ ...fleet, hosts: 1_000 }, costs);
    expect(plan.database.chunkIntervalHours).toBe(24);
    const larger = planCapacity(fleet, costs);
    expect(larger.database.chunkIntervalHours).toBeLessThan(24);
    expect(larger.database.memoryGB).toBeLessThanOrEqual(512);
  });

  it('says when one TimescaleDB primary no longer takes the load', () => {
    expect(planCapacity(fleet, costs).database.fitsOnePrimary).toBe(true);
    expect(planCapacity({ ...fleet, hosts: 1_000_000 }, costs).database.fitsOnePrimary).toBe(false);
  });

  it('uses a measured compressed size past the uncompressed days when there is one', () => {
    const withCompression: CapacityCosts = {
      ...costs,
      figures: {
        ...costs.figures,
        storedBytesPerRowCompressed: { ...costs.figures.storedBytesPerRowUncompressed, value: 9.1 },
      },
    };
    const bound = planCapacity(fleet, costs);
    const compressed = planCapacity(fleet, withCompression);
    expect(bound.database.diskCompressed).toBe(false);
    expect(compressed.database.diskCompressed).toBe(true);
    // 7 uncompressed days of 30, then a tenth of the size.
    expect(compressed.database.diskGB / bound.database.diskGB).toBeCloseTo((7 + 23 / 10) / 30, 6);
  });
});
