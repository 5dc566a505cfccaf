import { describe, expect, it } from 'vitest';
import { checkSampleTime, ingestLimits } from './ingest.js';
import { parseIngestBody } from './parse-ingest-body.js';
import { specExamplePayload } from './testing/spec-payload.js';

const minimal = { host: 'web-1', metrics: { cpu_percent: 12.5 } };

function pathsOf(value: unknown): string[] {
  const result = parseIngestBody(value);
  if (result.success) return [];
  return result.error.issues.map((issue) => issue.path.map(String).join('.'));
}

describe('parseIngestBody', () => {
  it('accepts a minimal payload as a batch of one', () => {
    const result = parseIngestBody(minimal);
    expect(result).toEqual({ success: true, data: [minimal] });
  });

  it('accepts the spec example with containers, processes and tags', () => {
    const payload = specExamplePayload;
    expect(parseIngestBody(payload).success).toBe(true);
  });

  it('drops unknown top-level fields so agents can evolve', () => {
    const result = parseIngestBody({ ...minimal, agent_version: '9.9' });
    expect(result.success && result.data[0]).toEqual(minimal);
  });

  it('names each failing path inside a batch', () => {
    expect(pathsOf([minimal, { host: '', metrics: {} }])).toEqual(
      expect.arrayContaining(['1.host', '1.metrics']),
    );
  });

  it('rejects a missing host, missing metrics and non-finite values', () => {
    expect(pathsOf({ metrics: { a: 1 } })).toContain('host');
    expect(pathsOf({ host: 'h' })).toContain('metrics');
    expect(pathsOf({ host: 'h', metrics: { a: 'high' } })).toContain('metrics.a');
  });

  it('rejects metric names outside the pattern', () => {
    expect(pathsOf({ host: 'h', metrics: { '9lives': 1 } })).toEqual(['metrics.9lives']);
    expect(pathsOf({ host: 'h', metrics: { ['a'.repeat(129)]: 1 } })).toHaveLength(1);
    expect(pathsOf({ host: 'h', metrics: { 'disk.used:root-fs': 1 } })).toEqual([]);
  });

  it('bounds metrics to 500 entries and tags to 64', () => {
    const metrics = Object.fromEntries(
      Array.from({ length: ingestLimits.maxMetricsPerPayload + 1 }, (_, i) => [`m${i}`, i]),
    );
    expect(pathsOf({ host: 'h', metrics })).toEqual(['metrics']);
    const tags = Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`t${i}`, 'v']));
    expect(pathsOf({ ...minimal, tags })).toEqual(['tags']);
    expect(pathsOf({ ...minimal, tags: { env: 7 } })).toEqual(['tags.env']);
  });

  it('rejects batches that are empty or longer than 1000', () => {
    expect(parseIngestBody([]).success).toBe(false);
    expect(parseIngestBody(Array.from({ length: 1001 }, () => minimal)).success).toBe(false);
    expect(parseIngestBody(Array.from({ length: 1000 }, () => minimal)).success).toBe(true);
  });

  it('checks process and container field types', () => {
    expect(pathsOf({ ...minimal, processes: [{ name: 'x', pid: -1 }] })).toEqual([
      'processes.0.pid',
    ]);
    expect(pathsOf({ ...minimal, processes: [{ name: 'x', pid: 1.5 }] })).toEqual([
      'processes.0.pid',
    ]);
    expect(pathsOf({ ...minimal, docker_containers: [{ name: 'c', memory_usage: -5 }] })).toEqual([
      'docker_containers.0.memory_usage',
    ]);
  });

  it('rejects a timestamp that is not ISO 8601', () => {
    expect(pathsOf({ ...minimal, timestamp: 'yesterday' })).toEqual(['timestamp']);
  });
});

describe('checkSampleTime', () => {
  const now = Date.parse('2026-11-22T12:00:00Z');
  const weekMs = 7 * 86_400_000;

  it('accepts samples up to 10 minutes ahead and within retention', () => {
    expect(checkSampleTime(now + 10 * 60_000, now, weekMs)).toBeUndefined();
    expect(checkSampleTime(now - weekMs + 1, now, weekMs)).toBeUndefined();
  });

  it('rejects samples from the far future or past retention', () => {
    expect(checkSampleTime(now + 10 * 60_000 + 1, now, weekMs)).toMatch(/future/);
    expect(checkSampleTime(now - weekMs - 1, now, weekMs)).toMatch(/retention/);
  });
});
