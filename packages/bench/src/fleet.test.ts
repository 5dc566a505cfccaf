import { describe, expect, it } from 'vitest';
import { parseIngestBody, readCanonicalIngestBody } from '@monitor/schemas';
import { createFleet } from './fleet.js';

const baseTimeMs = Date.UTC(2025, 0, 1);
type Sent = { host: string; timestamp: string; docker_containers: unknown[]; processes: unknown[] };

describe('createFleet', () => {
  it('sends single payloads the ingest schema accepts, shaped like the spec', () => {
    const fleet = createFleet({ hostCount: 3, baseTimeMs });
    const body = fleet.createBodySource({ payloadsPerRequest: 1, slots: 1 }).next(0);
    const parsed = parseIngestBody(JSON.parse(body.toString('utf8')));
    expect(parsed.success).toBe(true);
    const [payload] = parsed.success ? parsed.data : [];
    expect(Object.keys(payload?.metrics ?? {})).toEqual([
      'cpu_percent',
      'memory_percent',
      'disk_percent',
    ]);
    expect(Object.keys(payload?.tags ?? {})).toEqual(['environment', 'service', 'region']);
    expect(payload?.docker_containers).toHaveLength(5);
    expect(payload?.processes).toHaveLength(10);
  });

  it('sends single and batched bodies the gateway checks by hand, not through zod', () => {
    const fleet = createFleet({ hostCount: 3, baseTimeMs });
    for (const payloadsPerRequest of [1, 3]) {
      const body = fleet.createBodySource({ payloadsPerRequest, slots: 1 }).next(0);
      expect(readCanonicalIngestBody(JSON.parse(body.toString('utf8')))).toHaveLength(
        payloadsPerRequest,
      );
    }
  });

  it('never stamps two payloads of a host with the same time', () => {
    const fleet = createFleet({ hostCount: 5, baseTimeMs });
    const source = fleet.createBodySource({ payloadsPerRequest: 3, slots: 2 });
    const seen = new Set<string>();
    for (let i = 0; i < 20; i++) {
      const payloads = JSON.parse(source.next(i % 2).toString('utf8')) as Sent[];
      for (const { host, timestamp } of payloads) seen.add(`${host} ${timestamp}`);
    }
    expect(seen.size).toBe(60);
    expect(fleet.payloadsStamped()).toBe(60);
  });

  it('builds batches that pass the schema and fit the size it computed', () => {
    const fleet = createFleet({ hostCount: 1000, baseTimeMs });
    const fitting = fleet.payloadsFitting(1024 * 1024);
    const source = fleet.createBodySource({ payloadsPerRequest: fitting, slots: 1 });
    const body = source.next(0);
    expect(body.length).toBeLessThanOrEqual(1024 * 1024);
    expect(body.length).toBeLessThanOrEqual(source.maxBodyBytes);
    const parsed = parseIngestBody(JSON.parse(body.toString('utf8')));
    expect(parsed.success && parsed.data.length).toBe(fitting);
    expect(source.samplesPerRequest).toBe(fitting * 3);
  });
});
