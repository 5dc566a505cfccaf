import { describe, expect, it } from 'vitest';
import type { CompareBenchReport, WorkloadReport } from './compare-report.js';
import {
  chargeLoad,
  checkStored,
  compareRatios,
  formatCompareReport,
  issueTargets,
} from './compare-report.js';
import type { ResourceUsage } from './resource-sampler.js';
import type { WrkFigures } from './wrk-result.js';

function load(overrides: Partial<WrkFigures> = {}): WrkFigures {
  return {
    durationSeconds: 20,
    acknowledged: 200_000,
    requestsPerSecond: 10_000,
    samplesAcknowledged: 600_000,
    samplesPerSecond: 30_000,
    samplesSent: 600_192,
    unanswered: 64,
    failedStatuses: {},
    socketErrors: 0,
    failed: 0,
    latency: { meanMs: 6, p50Ms: 4, p90Ms: 10, p99Ms: 30, maxMs: 90 },
    ...overrides,
  };
}

function usage(cpuSeconds: Record<string, number | undefined>): ResourceUsage {
  const byProcess: ResourceUsage['byProcess'] = {};
  for (const [name, seconds] of Object.entries(cpuSeconds))
    byProcess[name] = { cpuSeconds: seconds, peakMemoryBytes: 100 * 1024 ** 2, memory: 'rss' };
  return { byProcess, selfCpuSeconds: 1, machineBusyPercent: 97 };
}

function workload(
  figures: WrkFigures,
  cpuSeconds: Record<string, number>,
  servers: string[],
): WorkloadReport {
  return {
    payloadsPerRequest: 1,
    connections: 64,
    load: figures,
    ...chargeLoad(usage(cpuSeconds), figures, servers),
    stored: checkStored({
      acknowledged: figures.samplesAcknowledged,
      sent: figures.samplesSent,
      storedBefore: 0,
      storedAfter: figures.samplesAcknowledged,
      drained: true,
    }),
  };
}

describe('checkStored', () => {
  it('accepts anything from the acknowledged to the sent samples', () => {
    const check = checkStored({
      acknowledged: 300,
      sent: 330,
      storedBefore: 1000,
      storedAfter: 1315,
      drained: true,
    });
    expect(check).toMatchObject({ stored: 315, missing: 0, duplicates: 0 });
  });

  it('counts acknowledged samples not stored as missing', () => {
    const check = checkStored({
      acknowledged: 300,
      sent: 330,
      storedBefore: 0,
      storedAfter: 290,
      drained: false,
    });
    expect(check).toMatchObject({ missing: 10, duplicates: 0, drained: false });
  });

  it('counts samples stored beyond those sent as duplicates', () => {
    const check = checkStored({
      acknowledged: 300,
      sent: 330,
      storedBefore: 0,
      storedAfter: 336,
      drained: true,
    });
    expect(check).toMatchObject({ missing: 0, duplicates: 6 });
  });
});

describe('chargeLoad', () => {
  it('charges each process with CPU per acknowledged request and sample', () => {
    const charged = chargeLoad(usage({ gateway: 4, writer: 2, wrk: 3 }), load(), [
      'gateway',
      'writer',
    ]);
    expect(charged.processes['gateway']).toMatchObject({
      cpuUsPerRequest: 20,
      cpuUsPerSample: 20 / 3,
    });
    expect(charged.processes['wrk']?.cpuUsPerRequest).toBe(15);
    expect(charged.serverCpuUsPerRequest).toBe(30);
    expect(charged.machineBusyPercent).toBe(97);
  });

  it('leaves the servers’ total out when one of them was not measured', () => {
    const charged = chargeLoad(usage({ gateway: 4, writer: undefined }), load(), [
      'gateway',
      'writer',
    ]);
    expect(charged.serverCpuUsPerRequest).toBeUndefined();
    expect(charged.processes['writer']?.cpuUsPerRequest).toBeUndefined();
  });

  it('charges nothing per request when nothing was acknowledged', () => {
    const charged = chargeLoad(
      usage({ gateway: 4 }),
      load({ acknowledged: 0, samplesAcknowledged: 0 }),
      ['gateway'],
    );
    expect(charged.serverCpuUsPerRequest).toBeUndefined();
  });
});

describe('compareRatios', () => {
  const vm = { single: workload(load(), { 'victoria-metrics': 2 }, ['victoria-metrics']) };
  const embedded = {
    single: workload(load({ requestsPerSecond: 2_500 }), { 'monitor all': 8 }, ['monitor all']),
  };
  const kafka = {
    single: workload(load({ requestsPerSecond: 2_000 }), { gateway: 6, writer: 3, kafka: 3 }, [
      'gateway',
      'writer',
      'kafka',
    ]),
  };

  it('divides our figures by VictoriaMetrics’ from the same run', () => {
    const ratios = compareRatios({
      targets: {
        'victoria-metrics': { format: 'influx', workloads: vm },
        embedded: { format: 'json', workloads: embedded },
        kafka: { format: 'json', workloads: kafka },
      },
      backlog: {
        rows: 300_000,
        rowsTimed: 250_000,
        seconds: 5,
        rowsPerSecond: 50_000,
        writerCpuSeconds: 3,
        batches: 12,
        drained: true,
      },
      copy: {
        rows: 500_000,
        batches: 50,
        rowsPerBatch: 10_000,
        copySeconds: 2.5,
        rowsPerSecond: 200_000,
        connections: 1,
      },
    });
    expect(ratios.embeddedVsVmRequestsSingle).toBe(0.25);
    expect(ratios.kafkaVsVmRequestsSingle).toBe(0.2);
    expect(ratios.gatewayVsVmCpuPerRequestSingle).toBe(3);
    expect(ratios.kafkaServersVsVmCpuPerRequestSingle).toBe(6);
    expect(ratios.writerDrainVsCopy).toBe(0.25);
    expect(ratios.embeddedVsVmSamplesBatched).toBeUndefined();
  });

  it('leaves out what a skipped target would have decided', () => {
    const ratios = compareRatios({
      targets: {
        'victoria-metrics': { format: 'influx', skipped: 'not installed', workloads: {} },
        embedded: { format: 'json', workloads: embedded },
      },
    });
    expect(Object.values(ratios).filter((value) => value !== undefined)).toEqual([]);
  });
});

describe('issueTargets', () => {
  const batched = (samplesPerSecond: number, missing = 0): WorkloadReport => {
    const figures = load({ samplesPerSecond });
    const w = workload(figures, { 'monitor all': 8, gateway: 4 }, []);
    return { ...w, stored: { ...w.stored, missing } };
  };

  it('meets a throughput only when every acknowledged sample was stored', () => {
    const targets = issueTargets({
      targets: {
        kafka: { format: 'json', workloads: { batched: batched(250_000, 3) } },
        embedded: { format: 'json', workloads: { batched: batched(120_000) } },
      },
      ratios: {
        embeddedVsVmRequestsSingle: 0.2,
        gatewayVsVmCpuPerRequestSingle: 3.5,
        gatewayVsVmCpuPerSampleRemoteWrite: 1.9,
        writerDrainVsCopy: 0.6,
      },
    });
    expect(targets.map((row) => row.met)).toEqual([
      false, // 250k, but 3 samples missing
      true,
      false, // a ratio without its load's storage check does not count
      false,
      true,
      true, // 100 MiB peak
      true,
    ]);
    expect(targets[0]?.measured).toBe('250,000 samples/s, NOT all stored');
  });

  it('says what the run did not measure', () => {
    const targets = issueTargets({ targets: {}, ratios: {} });
    expect(targets.every((row) => row.met === undefined && row.measured === '-')).toBe(true);
  });
});

describe('formatCompareReport', () => {
  /** A run on a 2-core machine with the default settings that measured nothing. */
  const runReport = (): CompareBenchReport => ({
    date: '2026-11-23T17:00:00.000Z',
    machine: {
      os: 'Linux',
      cpuModel: 'cpu',
      cpuCount: 2,
      totalMemoryBytes: 2 ** 34,
      node: 'v20',
      loadAverageAtStart: [0.1, 0.1, 0.1],
    },
    logWarnings: {},
    notes: [],
    logDir: '/tmp/x',
    settings: {
      hosts: 10_000,
      valueVariants: 4,
      durationSeconds: 20,
      warmUpSeconds: 3,
      threads: 2,
      workloads: {
        single: { payloadsPerRequest: 1, connections: 64 },
        batched: { payloadsPerRequest: 100, connections: 16 },
      },
      backlogSeconds: 20,
      victoriaMetrics: { binary: '/usr/bin/victoria-metrics' },
      kafkaServices: {},
    },
    targets: {},
    ratios: {},
  });

  it('names each ratio and says why a target was skipped', () => {
    const report: CompareBenchReport = {
      ...runReport(),
      targets: {
        'victoria-metrics': {
          format: 'influx',
          skipped: 'not installed (apt-get install victoria-metrics)',
          workloads: {},
        },
        embedded: {
          format: 'json',
          workloads: { single: workload(load(), { 'monitor all': 8 }, ['monitor all']) },
        },
      },
      ratios: { embeddedVsVmRequestsSingle: 0.5 },
    };
    const text = formatCompareReport(report);
    expect(text).toContain('embedded / VM requests/s, 1 host per request');
    expect(text).toContain('50.0 %');
    expect(text).toContain(
      'victoria-metrics  skipped: not installed (apt-get install victoria-metrics)',
    );
    expect(text).toContain('npm run bench:ingest');
  });

  it('puts the drain against each raw COPY', () => {
    const copy = (rows: number, rowsPerSecond: number) => ({
      rows,
      batches: rows / 10_000,
      rowsPerBatch: 10_000,
      copySeconds: rows / rowsPerSecond,
      rowsPerSecond,
      connections: 4,
    });
    const text = formatCompareReport({
      ...runReport(),
      backlog: {
        rows: 6_000_000,
        rowsTimed: 5_900_000,
        seconds: 12,
        rowsPerSecond: 500_000,
        writerCpuSeconds: 8,
        batches: 70,
        drained: true,
      },
      copies: [copy(500_000, 800_000), copy(500_000, 400_000)],
    });
    expect(text).toContain('800,000 rows/s (500,000 rows, 4 connections), the drain 62.5 % of it');
    expect(text).toContain('400,000 rows/s (500,000 rows, 4 connections), the drain 125.0 % of it');
  });
});
