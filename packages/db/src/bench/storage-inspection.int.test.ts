// @services postgres timescale
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import {
  compressOlderChunks,
  pausePolicyJobs,
  refreshAggregates,
  vacuumAnalyze,
} from '../maintenance/chunk-maintenance.js';
import type { HostSample } from '../samples/sample-batch.js';
import { createSampleStore } from '../samples/sample-store.js';
import {
  listChunkParts,
  listRawChunks,
  readRawChunkIntervalMs,
} from '../storage/chunk-inventory.js';
import { defaultStoragePolicies } from '../schema/storage-settings.js';
import { readCompressionWindows, readRawRetentionDays } from '../storage/policy-windows.js';
import { measurePlainSizes, measureTimescaleSizes } from '../storage/storage-sizes.js';
import { headCompressLagMs } from '../storage/timescale/head-chunks.js';
import { migratedDatabase } from '../testing/clean-database.js';
import { countSamples, countSamplesBetween, countStoredRows } from './run-checks.js';

const hourMs = 3_600_000;
/** Two days back, a whole hour: its chunk is older than any compress_after. */
const startMs = Math.floor(Date.now() / hourMs) * hourMs - 48 * hourMs;
const points = 120;

function samples(): HostSample[] {
  return Array.from({ length: points }, (_, i) => ({
    orgId: 'org_bench',
    host: 'web-1',
    timeMs: startMs + i * 30_000,
    metrics: { cpu_percent: i % 100, load_1m: i / 10 },
    tags: {},
    containers: [],
    processes: [],
  }));
}

describe('storage sizes and chunks (TimescaleDB)', () => {
  let db: Database;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase('timescale', 'db_storage_inspection'));
    await pausePolicyJobs(db);
    await createSampleStore(db).writeBatch({ samples: samples() });
  });

  afterAll(async () => {
    await dispose?.();
  });

  it('lists the raw chunks with the samples they hold, uncompressed at first', async () => {
    const parts = await listChunkParts(db, 'samples');
    expect(parts.length).toBeGreaterThan(0);
    expect(parts.every((part) => !part.compressed && part.bytes > 0)).toBe(true);
    let held = 0;
    for (const part of parts) held += await countSamplesBetween(db, part.startMs, part.endMs);
    expect(held).toBe(2 * points);
    expect(await countSamples(db)).toBe(2 * points);
    const interval = await readRawChunkIntervalMs(db);
    expect(parts.every((part) => part.endMs - part.startMs === interval)).toBe(true);
  });

  it('compresses the chunks that ended, and the sizes count them compressed', async () => {
    const compressed = await compressOlderChunks(db, 'samples', new Date(Date.now() - hourMs));
    expect(compressed).toBeGreaterThan(0);
    expect((await listRawChunks(db)).every((chunk) => chunk.compressed)).toBe(true);
    expect((await listChunkParts(db, 'samples')).every((part) => part.compressed)).toBe(true);
    await vacuumAnalyze(db, ['services']);

    const sizes = await measureTimescaleSizes(db);
    const kinds = new Map(sizes.relations.map((r) => [r.name, r.kind]));
    expect(kinds.get('samples')).toBe('hypertable');
    expect(kinds.get('samples_1m')).toBe('aggregate');
    expect(kinds.get('samples_1h')).toBe('aggregate');
    expect(kinds.get('series')).toBe('dictionary');
    expect(kinds.get('services')).toBe('dictionary');
    const raw = sizes.compression.find((c) => c.name === 'samples');
    // Head chunks merge into the compressed chunk before them (storage/timescale/head-chunks.ts).
    expect(raw?.compressedChunks).toBe((await listRawChunks(db)).length);
    expect(raw?.afterBytes).toBeGreaterThan(0);
    expect(sizes.databaseBytes).toBeGreaterThan(0);
  });

  it('refreshes both aggregates over the whole range', async () => {
    await refreshAggregates(db, ['samples_1m', 'samples_1h']);
    const stored = await countStoredRows(db);
    expect(stored.raw).toBe(2 * points);
    // One-minute buckets of two metrics over an hour; hour buckets of the same two.
    expect(stored.minutes).toBe(2 * 60);
    expect(stored.hours).toBe(2);
  });

  it('reads the compression jobs and the stored raw retention', async () => {
    const windows = await readCompressionWindows(db);
    const raw = windows.find((w) => w.name === 'samples');
    // A head chunk waits at least a minute past its end.
    expect(raw?.compressAfterHours).toBe(
      Math.max(defaultStoragePolicies.compressAfterHours, headCompressLagMs / hourMs),
    );
    expect(raw?.chunkHours).toBeGreaterThan(0);
    expect(raw?.jobHours).toBeGreaterThan(0);
    expect(await readRawRetentionDays(db)).toBe(defaultStoragePolicies.rawRetentionDays);
  });
});

describe('storage sizes (plain PostgreSQL)', () => {
  let db: Database;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase('postgres', 'db_storage_inspection'));
    await createSampleStore(db).writeBatch({ samples: samples() });
  });

  afterAll(async () => {
    await dispose?.();
  });

  it('sums each partitioned table over its partitions, the rollups under their views', async () => {
    const sizes = await measurePlainSizes(db);
    const byName = new Map(sizes.relations.map((r) => [r.name, r]));
    expect(byName.get('samples')?.kind).toBe('hypertable');
    expect(byName.get('samples')?.tableBytes).toBeGreaterThan(0);
    expect(byName.get('samples_1m')?.kind).toBe('aggregate');
    expect(byName.get('series')?.kind).toBe('dictionary');
    expect(sizes.compression).toEqual([]);
    expect(sizes.databaseBytes).toBeGreaterThan(0);
  });
});
