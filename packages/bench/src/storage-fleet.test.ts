import { describe, expect, it } from 'vitest';
import type { MetricShape, StorageFleet } from './storage-fleet.js';
import { createStorageFleet, quantize, storageMetricShapes } from './storage-fleet.js';

const options = {
  hostCount: 12,
  pointsPerSeries: 2_880,
  intervalMs: 30_000,
  startMs: Date.UTC(2026, 10, 23, 1),
  seed: 25,
};
const fleet = createStorageFleet(options);

function seriesOf(f: StorageFleet, host: number, metric: string): Float64Array {
  const m = f.metrics.findIndex((shape) => shape.name === metric);
  const series = host * f.metrics.length + m;
  return f.values.subarray(series * f.pointsPerSeries, (series + 1) * f.pointsPerSeries);
}

function shape(name: string): MetricShape {
  const found = storageMetricShapes.find((m) => m.name === name);
  if (found === undefined) throw new Error(`no metric ${name}`);
  return found;
}

/** Whether `value` is a whole multiple of `quantum`, as its shortest decimal shows. */
function onQuantum(value: number, quantum: number): boolean {
  // Differences of counters near 1e8 carry float error well below a thousandth of a quantum.
  return Math.abs(value / quantum - Math.round(value / quantum)) < 1e-3;
}

describe('createStorageFleet', () => {
  it('holds hosts × metrics series of the asked points, stamped every interval', () => {
    expect(fleet.metrics).toHaveLength(10);
    expect(fleet.seriesCount).toBe(120);
    expect(fleet.sampleCount).toBe(120 * 2_880);
    expect(fleet.values).toHaveLength(fleet.sampleCount);
    expect(fleet.timeOf(0)).toBe(options.startMs);
    expect(fleet.timeOf(2_879) - fleet.timeOf(0)).toBe(24 * 3_600_000 - 30_000);
    expect(new Set(fleet.hosts.map((h) => h.name)).size).toBe(12);
  });

  it('stamps each host’s points up to the jitter off the grid, the same values as without', () => {
    const jittered = createStorageFleet({ ...options, jitterMs: 15 });
    expect(jittered.values).toEqual(fleet.values);
    const offsets = Array.from({ length: 12 * 2_880 }, (_, i) => {
      const host = Math.floor(i / 2_880);
      const point = i % 2_880;
      return jittered.timeOf(point, host) - fleet.timeOf(point);
    });
    expect(Math.min(...offsets)).toBe(-15);
    expect(Math.max(...offsets)).toBe(15);
    expect(offsets.every(Number.isInteger)).toBe(true);
    expect(createStorageFleet({ ...options, jitterMs: 15 }).timeOf(7, 3)).toBe(
      jittered.timeOf(7, 3),
    );
  });

  it('gives the same values for the same seed and others for another', () => {
    expect(createStorageFleet(options).values).toEqual(fleet.values);
    const other = createStorageFleet({ ...options, seed: 26 });
    expect(other.values).not.toEqual(fleet.values);
  });

  it('has both gauges and counters', () => {
    const kinds = storageMetricShapes.map((m) => m.kind);
    expect(kinds.filter((k) => k === 'gauge').length).toBeGreaterThanOrEqual(4);
    expect(kinds.filter((k) => k === 'counter').length).toBeGreaterThanOrEqual(3);
  });

  it.each(storageMetricShapes.filter((m) => m.kind === 'gauge').map((m) => m.name))(
    'keeps gauge %s in its range, at the precision agents send, and moving',
    (name) => {
      const gauge = shape(name);
      if (gauge.kind !== 'gauge') throw new Error('not a gauge');
      for (let host = 0; host < fleet.hosts.length; host++) {
        const values = seriesOf(fleet, host, name);
        const outside = values.filter(
          (v) => v < gauge.min || v > gauge.max || !onQuantum(v, gauge.quantum),
        );
        expect(outside).toEqual(new Float64Array(0));
        // Noisy, not constant: most points differ from the one before.
        let changes = 0;
        for (let p = 1; p < values.length; p++) if (values[p] !== values[p - 1]) changes++;
        expect(changes).toBeGreaterThan(values.length / 2);
      }
    },
  );

  it('sends decimal gauges as their shortest decimals', () => {
    const cpu = [...seriesOf(fleet, 0, 'cpu_percent')];
    expect(cpu.every((v) => (String(v).split('.')[1] ?? '').length <= 1)).toBe(true);
    const load = [...seriesOf(fleet, 0, 'load_1m')];
    expect(load.every((v) => (String(v).split('.')[1] ?? '').length <= 2)).toBe(true);
  });

  it.each(storageMetricShapes.filter((m) => m.kind === 'counter').map((m) => m.name))(
    'grows counter %s monotonically by increments on its quantum, at about its rate',
    (name) => {
      const counter = shape(name);
      if (counter.kind !== 'counter') throw new Error('not a counter');
      for (let host = 0; host < fleet.hosts.length; host++) {
        const values = seriesOf(fleet, host, name);
        let increments = 0;
        const wrong: number[] = [];
        for (let p = 1; p < values.length; p++) {
          const increment = (values[p] ?? 0) - (values[p - 1] ?? 0);
          if (increment < 0 || !onQuantum(increment, counter.quantum)) wrong.push(increment);
          if (increment > 0) increments++;
        }
        expect(wrong).toEqual([]);
        expect(increments).toBeGreaterThan(values.length * 0.9);
        const first = values[0] ?? 0;
        const last = values[values.length - 1] ?? 0;
        const ratePerSecond = (last - first) / ((values.length - 1) * 30);
        expect(ratePerSecond).toBeGreaterThan(counter.rate[0] * 0.3);
        expect(ratePerSecond).toBeLessThan(counter.rate[1] * 3);
      }
    },
  );

  it('follows a daily cycle: CPU peaks and troughs differ over the day', () => {
    let spread = 0;
    for (let host = 0; host < fleet.hosts.length; host++) {
      const values = seriesOf(fleet, host, 'cpu_percent');
      const hourly = Array.from({ length: 24 }, (_, h) => {
        const hour = values.subarray(h * 120, (h + 1) * 120);
        return hour.reduce((a, b) => a + b, 0) / hour.length;
      });
      spread += Math.max(...hourly) - Math.min(...hourly);
    }
    expect(spread / fleet.hosts.length).toBeGreaterThan(5);
  });
});

describe('quantize', () => {
  it('rounds to whole quanta, decimal ones to their shortest decimal', () => {
    expect(quantize(12.345, 0.1)).toBe(12.3);
    expect(quantize(0.1 + 0.2, 0.01)).toBe(0.3);
    expect(quantize(10_000, 4096)).toBe(8192);
    expect(quantize(7.6, 1)).toBe(8);
  });
});
