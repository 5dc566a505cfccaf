import { performance } from 'node:perf_hooks';
import { defaultStoragePolicies } from '@monitor/db';
import type { Database } from '@monitor/db';
import type { KeptTier } from '@monitor/db/bench';
import {
  compressKeptTierChunk,
  fillKeptTierChunk,
  keptTiers,
  maintainKeptTiers,
  readRawRetentionDays,
} from '@monitor/db/bench';
import { logProgress } from './harness/progress.js';

/*
 * The rollup tiers kept beyond the raw retention (issue 57), weighed at steady state: stored by
 * the writer's maintenance as it would store them while the fleet's samples near the raw
 * retention, a chunk of each filled from those rows, then compressed. Issue 57's target: per
 * raw sample a tier summarizes, at most a quarter of a raw sample's bytes.
 */

const hourMs = 3_600_000;
const dayMs = 24 * hourMs;

/** The target: a tier's bytes per raw sample it summarizes over a raw sample's bytes. */
const keptTierTargetRatio = 0.25;

/** One tier's full chunk, compressed, and what it costs per row and per raw sample. */
export type KeptTierFigures = {
  tier: KeptTier['name'];
  table: string;
  widthMinutes: number;
  chunkDays: number;
  /** Rows of the full chunk, and the raw samples they summarize (their counts). */
  rows: number;
  samples: number;
  /** Rows the maintenance stored more than once per series and bucket (not copied). */
  duplicateRows: number;
  /** The chunk's bytes compressed (tables, indexes, TOAST), and before. */
  bytes: number;
  uncompressedBytes: number;
  bytesPerRow: number;
  uncompressedBytesPerRow: number;
  bytesPerSample: number;
  /** A raw sample's bytes, compressed (the steady state's raw samples). */
  rawBytesPerSample: number;
  ratio: number;
  targetRatio: number;
  met: boolean;
};

/** Figures of one tier's measured chunk against a raw sample's bytes. */
export function keptTierFigures(input: {
  tier: Pick<KeptTier, 'name' | 'table' | 'widthMs' | 'chunkMs'>;
  rows: number;
  samples: number;
  duplicateRows: number;
  bytes: number;
  uncompressedBytes: number;
  rawBytesPerSample: number;
}): KeptTierFigures {
  const { tier, rows, samples } = input;
  if (rows <= 0 || samples <= 0) throw new RangeError(`nothing measured of ${tier.table}`);
  const bytesPerSample = input.bytes / samples;
  const ratio = bytesPerSample / input.rawBytesPerSample;
  return {
    tier: tier.name,
    table: tier.table,
    widthMinutes: tier.widthMs / 60_000,
    chunkDays: tier.chunkMs / dayMs,
    rows,
    samples,
    duplicateRows: input.duplicateRows,
    bytes: input.bytes,
    uncompressedBytes: input.uncompressedBytes,
    bytesPerRow: input.bytes / rows,
    uncompressedBytesPerRow: input.uncompressedBytes / rows,
    bytesPerSample,
    rawBytesPerSample: input.rawBytesPerSample,
    ratio,
    targetRatio: keptTierTargetRatio,
    met: ratio <= keptTierTargetRatio,
  };
}

/**
 * Stores the tiers of the history `[startMs, endMs)` as the writer's maintenance would while
 * those samples near the raw retention: run once an hour of a clock whose raw retention's edge
 * starts at `startMs` (the first run begins there), until every bucket of the history is
 * stored. Then, per tier, the newest chunk before the history is filled with those rows
 * shifted back by whole days (`fillKeptTierChunk`) and compressed. Resolves the figures and
 * the seconds each step took.
 */
export async function measureKeptTiers(
  db: Database,
  input: { startMs: number; endMs: number; rawBytesPerSample: number },
): Promise<{ tiers: KeptTierFigures[]; steps: Record<string, number> }> {
  const policies = { ...defaultStoragePolicies, rawRetentionDays: await readRawRetentionDays(db) };
  const retentionMs = policies.rawRetentionDays * dayMs;
  const steps: Record<string, number> = {};
  const stored = await timed(async () => {
    // The maintenance stores buckets up to 6 hours past the edge: it runs until the edge is
    // 6 hours before the history's end, an hour of its clock at a time.
    for (let edgeMs = input.startMs; ; edgeMs += hourMs) {
      const upkeep = await maintainKeptTiers(db, {
        now: new Date(edgeMs + retentionMs),
        policies,
        mode: 'timescale',
        maxWindows: 24,
      });
      if (upkeep.filled.every((f) => f.filledToMs >= input.endMs)) return upkeep;
      if (edgeMs > input.endMs) throw new Error('the kept tiers never reached the history end');
    }
  });
  steps['store kept tiers'] = stored.seconds;
  const tiers: KeptTierFigures[] = [];
  for (const tier of keptTiers) {
    const filled = await timed(() =>
      fillKeptTierChunk(db, tier.name, { fromMs: input.startMs, toMs: input.endMs }),
    );
    steps[`fill a ${tier.table} chunk`] = filled.seconds;
    const measured = await timed(() => compressKeptTierChunk(db, tier.name, filled.value.startMs));
    steps[`compress a ${tier.table} chunk`] = measured.seconds;
    const figures = keptTierFigures({
      tier,
      ...measured.value,
      duplicateRows: filled.value.duplicateRows,
      rawBytesPerSample: input.rawBytesPerSample,
    });
    logProgress(
      `${tier.table}: ${figures.bytesPerRow.toFixed(1)} bytes a row, ` +
        `${figures.bytesPerSample.toFixed(3)} per raw sample, ${figures.ratio.toFixed(3)} of a raw sample`,
    );
    tiers.push(figures);
  }
  return { tiers, steps };
}

/** The tiers' figures, a line each, for the report. */
export function formatKeptTiers(tiers: readonly KeptTierFigures[]): string[] {
  if (tiers.length === 0) return [];
  const f = (n: number, digits: number) => n.toFixed(digits).padStart(12);
  return [
    'kept tiers (issue 57): one full chunk of each, filled from the stored rows shifted back by whole days, compressed',
    `${'tier'.padEnd(18)}${'chunk'.padStart(8)}${'rows'.padStart(12)}${'samples'.padStart(12)}` +
      `${'MiB'.padStart(12)}${'B/row'.padStart(12)}${'B/row raw'.padStart(12)}` +
      `${'B/sample'.padStart(12)}${'of raw'.padStart(12)}  target ≤ ${keptTierTargetRatio}`,
    ...tiers.map(
      (t) =>
        `${t.table.padEnd(18)}${`${t.chunkDays} d`.padStart(8)}${String(t.rows).padStart(12)}` +
        `${String(t.samples).padStart(12)}${f(t.bytes / 1024 ** 2, 1)}${f(t.bytesPerRow, 2)}` +
        `${f(t.uncompressedBytesPerRow, 1)}${f(t.bytesPerSample, 3)}${f(t.ratio, 3)}  ` +
        (t.met ? 'met' : 'NOT MET'),
    ),
    `  a raw sample: ${tiers[0]!.rawBytesPerSample.toFixed(3)} bytes compressed (the steady state's raw samples)`,
    ...tiers
      .filter((t) => t.duplicateRows > 0)
      .map(
        (t) =>
          `  ${t.table}: the maintenance stored ${t.duplicateRows} rows of the history twice; each (series, bucket) copied once`,
      ),
  ];
}

/** What `work` gives and the seconds it took. */
export async function timed<T>(work: () => Promise<T>): Promise<{ value: T; seconds: number }> {
  const startedAt = performance.now();
  const value = await work();
  return { value, seconds: (performance.now() - startedAt) / 1000 };
}
