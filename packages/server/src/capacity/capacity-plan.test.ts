import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import costsJson from './capacity-costs.json' with { type: 'json' };
import {
  defaultAssumptions,
  parseCapacityCosts,
  planCapacity,
  predictBenchThroughput,
  readReplicaVerdict,
} from './capacity-plan.js';

const costs = parseCapacityCosts(costsJson);

const fleet = {
  hosts: 10_000,
  metricsPerHost: 100,
  intervalSeconds: 15,
  retentionDays: 30,
  rollup1mRetentionDays: 90,
  rollup1hRetentionDays: 730,
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
    // Disk and memory too: the head chunks are 5 minutes whatever the fleet.
    expect(large.database.diskGB).toBeCloseTo(10 * small.database.diskGB, 6);
    expect(large.database.memoryGB).toBeCloseTo(10 * small.database.memoryGB, 6);
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

  it('sizes memory for the head chunk being written within a quarter of it', () => {
    const plan = planCapacity(fleet, costs);
    expect(plan.database.headChunkMinutes).toBe(5);
    expect(plan.database.memoryGB).toBeCloseTo(
      (4 * plan.samplesPerSecond * 300 * costs.figures.rawBytesPerRowUncompressed.value) / 1e9,
      9,
    );
  });

  it('says when one TimescaleDB primary no longer takes the load', () => {
    expect(planCapacity(fleet, costs).database.fitsOnePrimary).toBe(true);
    // A million hosts of 100 metrics every 15 s fit a node of 1 TB since the head chunks
    // (issue 56); three million do not.
    expect(planCapacity({ ...fleet, hosts: 1_000_000 }, costs).database.fitsOnePrimary).toBe(true);
    expect(planCapacity({ ...fleet, hosts: 3_000_000 }, costs).database.fitsOnePrimary).toBe(false);
  });

  it('plans sample shards past one primary, each within the largest one', () => {
    const one = planCapacity({ ...fleet, hosts: 1_000_000 }, costs);
    expect(one.database.shards.count).toBe(1);
    for (const hosts of [3_000_000, 10_000_000]) {
      const plan = planCapacity({ ...fleet, hosts }, costs);
      const { shards } = plan.database;
      expect(shards.count, String(hosts)).toBeGreaterThan(1);
      // The smallest count that fits, a shard's PostgreSQL costing more per sample than one
      // database's: one fewer would not.
      const shardedCores = plan.database.cores * costs.figures.shardPostgresCpuFactor.value;
      const fits = (count: number) =>
        (count === 1 ? plan.database.cores : shardedCores) /
          count /
          defaultAssumptions.targetUtilization <=
          defaultAssumptions.maxDatabaseCores &&
        plan.database.memoryGB / count <= defaultAssumptions.maxDatabaseMemoryGB;
      expect(fits(shards.count)).toBe(true);
      expect(fits(shards.count - 1)).toBe(false);
      expect(shards.coresPerNode).toBeLessThanOrEqual(defaultAssumptions.maxDatabaseCores);
      expect(shards.diskGB * shards.count).toBeCloseTo(plan.database.diskGB, 6);
      // Each shard holds as many partitions as the others.
      expect(plan.kafka.partitions % shards.count).toBe(0);
    }
  });

  it('sizes Kafka per request and per sample, as the bus carries them', () => {
    const f = costs.figures;
    const single = planCapacity(fleet, costs);
    const batched = planCapacity({ ...fleet, hostsPerRequest: 100 }, costs);
    const bytesPerSecond = (plan: typeof single): number => plan.kafka.ingressMBps * 1e6;
    expect(bytesPerSecond(single) - bytesPerSecond(batched)).toBeCloseTo(
      (single.requestsPerSecond - batched.requestsPerSecond) * f.busBytesPerRequest.value,
      3,
    );
    expect(single.kafka.diskGB).toBeCloseTo((bytesPerSecond(single) * 3 * 7 * 86_400) / 1e9, 6);
  });

  it('counts the raw samples in head chunks, merged, then consolidated', () => {
    const f = costs.figures;
    const plan = planCapacity({ ...fleet, hosts: 1_000 }, costs);
    const series = 1_000 * fleet.metricsPerHost;
    const headHours =
      5 / 60 + defaultAssumptions.compressAfterHours + defaultAssumptions.jobIntervalHours;
    const mergedHours = defaultAssumptions.mergedHours;
    const perSeries =
      240 *
        ((30 * 24 - headHours - mergedHours) * f.rawBytesPerSampleCompressed.value +
          headHours * f.rawBytesPerRowUncompressed.value) +
      mergedHours * 12 * f.rawBytesPerMergedBatch.value;
    expect(plan.database.disk.rawGB).toBeCloseTo((series * perSeries) / 1e9, 6);
    // A retention shorter than the head keeps every raw sample in head chunks.
    const short = planCapacity({ ...fleet, hosts: 1_000, retentionDays: 0.002 }, costs);
    expect(short.database.disk.rawGB).toBeCloseTo(
      (series * 240 * 0.048 * f.rawBytesPerRowUncompressed.value) / 1e9,
      6,
    );
  });

  it('keeps neither the 1-minute nor the 1-hour aggregate (both retired)', () => {
    const plan = planCapacity(fleet, costs);
    expect(Object.keys(plan.database.disk).sort()).toEqual([
      'rawGB',
      'seriesGB',
      'tier1hGB',
      'tier5mGB',
    ]);
    expect(plan.database.bytesPerSample).toBeCloseTo(
      (plan.database.diskGB * 1e9) / (plan.samplesPerSecond * 30 * 86_400),
      9,
    );
  });
});

describe('the kept tiers', () => {
  it('keeps each tier from shortly before the raw retention to its own and a chunk more, compressed but for its last day', () => {
    const f = costs.figures;
    const plan = planCapacity(fleet, costs);
    const series = fleet.hosts * fleet.metricsPerHost;
    // Stored 6 hours before the raw retention, dropped a whole chunk (7 and 30 days) late.
    const held5m = (90 - 30) * 24 + 6 + 7 * 24;
    const held1h = (730 - 30) * 24 + 6 + 30 * 24;
    expect(plan.database.disk.tier5mGB).toBeCloseTo(
      (series *
        12 *
        ((held5m - 25) * f.tier5mBytesPerRowCompressed.value +
          25 * f.tier5mBytesPerRowUncompressed.value)) /
        1e9,
      6,
    );
    expect(plan.database.disk.tier1hGB).toBeCloseTo(
      (series *
        ((held1h - 25) * f.tier1hBytesPerRowCompressed.value +
          25 * f.tier1hBytesPerRowUncompressed.value)) /
        1e9,
      6,
    );
    // Kept no longer than the raw samples, a tier holds the hours stored before they go, and
    // the chunk that waits to be dropped.
    const equal = planCapacity({ ...fleet, rollup1mRetentionDays: 30 }, costs);
    expect(equal.database.disk.tier5mGB).toBeCloseTo(
      (series *
        12 *
        ((6 + 7 * 24 - 25) * f.tier5mBytesPerRowCompressed.value +
          25 * f.tier5mBytesPerRowUncompressed.value)) /
        1e9,
      6,
    );
  });

  it('counts the tiers in the disk beside the raw samples, and the bill over them', () => {
    const { disk, diskGB, rawMultiple } = planCapacity(fleet, costs).database;
    expect(diskGB).toBeCloseTo(disk.rawGB + disk.tier5mGB + disk.tier1hGB + disk.seriesGB, 9);
    expect(rawMultiple).toBeCloseTo(diskGB / disk.rawGB, 9);
  });
});

describe('the database nodes', () => {
  it('counts the standby as a whole copy: memory and disk twice by default', () => {
    const plan = planCapacity(fleet, costs);
    expect(defaultAssumptions.databaseStandbys).toBe(1);
    expect(plan.database.nodes).toBe(2);
    expect(plan.database.total.memoryGB).toBeCloseTo(2 * plan.database.memoryGB, 9);
    expect(plan.database.total.diskGB).toBeCloseTo(2 * plan.database.diskGB, 9);
    expect(plan.database.total.cores).toBe(2 * plan.database.coresPerNode);
  });

  it('counts one node without a standby and n + 1 with n', () => {
    const single = planCapacity(fleet, costs, { ...defaultAssumptions, databaseStandbys: 0 });
    expect(single.database.total.diskGB).toBeCloseTo(single.database.diskGB, 9);
    const three = planCapacity(fleet, costs, { ...defaultAssumptions, databaseStandbys: 2 });
    expect(three.database.nodes).toBe(3);
    expect(three.database.total.memoryGB).toBeCloseTo(3 * single.database.memoryGB, 9);
    // A standby changes neither the primary's size nor the Kafka or role plan.
    expect(three.database.coresPerNode).toBe(single.database.coresPerNode);
    expect(three.writer).toEqual(single.writer);
  });

  it('gives the primary and its standbys the cores its measured reads take while they fit', () => {
    const writesOnly = planCapacity(fleet, costs);
    const withReads = planCapacity({ ...fleet, databaseReadCores: 4 }, costs);
    expect(withReads.database.readReplica).toEqual({ pays: false, reason: 'primary takes both' });
    expect(withReads.database.coresPerNode).toBe(
      Math.ceil((writesOnly.database.cores + 4) / defaultAssumptions.targetUtilization),
    );
    expect(withReads.database.total.diskGB).toBeCloseTo(writesOnly.database.total.diskGB, 9);
  });

  it('adds read replicas, whole copies, once writes and reads outgrow the largest primary', () => {
    const plan = planCapacity({ ...fleet, databaseReadCores: 40 }, costs);
    const verdict = plan.database.readReplica;
    expect(verdict.pays).toBe(true);
    if (verdict.pays !== true) return;
    expect(verdict.replicas).toBe(2);
    expect(plan.database.total.diskGB).toBeCloseTo(4 * plan.database.diskGB, 9);
    // The reads left the primary.
    expect(plan.database.coresPerNode).toBe(planCapacity(fleet, costs).database.coresPerNode);
  });
});

describe('readReplicaVerdict', () => {
  const assumptions = { targetUtilization: 0.7, maxDatabaseCores: 32 };

  it('says nothing without measured reads', () => {
    expect(readReplicaVerdict(3, undefined, assumptions).pays).toBeUndefined();
  });

  it('keeps the reads on the primary while both fit it, however the reads compare', () => {
    expect(readReplicaVerdict(1, 20, assumptions)).toEqual({
      pays: false,
      reason: 'primary takes both',
    });
  });

  it('finds no replica worth having when the writes alone fill the largest primary', () => {
    expect(readReplicaVerdict(23, 5, assumptions).reason).toBe('writes alone fill the primary');
  });

  it('takes the fewest replicas that serve the reads beside their replay, none beyond the largest size', () => {
    fc.assert(
      fc.property(
        fc.double({ min: 0, max: 40, noNaN: true }),
        fc.double({ min: 0, max: 500, noNaN: true }),
        fc.integer({ min: 1, max: 128 }),
        (writes, reads, maxDatabaseCores) => {
          const limits = { targetUtilization: 0.7, maxDatabaseCores };
          const verdict = readReplicaVerdict(writes, reads, limits);
          const fits = (writes + reads) / 0.7 <= maxDatabaseCores;
          if (fits) return verdict.pays === false && verdict.reason === 'primary takes both';
          if (verdict.pays !== true) return verdict.reason === 'writes alone fill the primary';
          const perReplica = maxDatabaseCores * 0.7 - writes;
          return (
            verdict.replicas * perReplica >= reads - 1e-9 &&
            (verdict.replicas - 1) * perReplica < reads &&
            verdict.coresPerReplica <= maxDatabaseCores
          );
        },
      ),
    );
  });
});
