import { gzipSync } from 'node:zlib';
import { beforeAll, describe, expect, it } from 'vitest';
import type { ApiExchange, ApiReply } from '@monitor/testkit/builders';
import { createApiCall, problemBody } from '@monitor/testkit/builders';
import type { ApiTarget } from '../api-target.js';
import { newOrganization } from '../api-target.js';
import { expectExchangesDocumented } from '../openapi-conformance.js';

/**
 * POST /api/v1/ingest over HTTP: what it accepts (one payload, a batch, gzip, a bearer key) and
 * each client error as a problem body. What happens to accepted samples afterwards is the
 * pipeline tests' business. Every answer is checked against the served OpenAPI document at the
 * end.
 */
export function describeIngestApi(target: () => ApiTarget, exchanges: ApiExchange[]): void {
  /** A key with every scope of the suite's organization. */
  let key: string;
  const call = createApiCall({ baseUrl: () => target().ingestUrl, exchanges });

  async function send(
    body: unknown,
    options: {
      key?: string;
      contentType?: string;
      gzip?: boolean;
      raw?: string;
      headers?: Record<string, string>;
    } = {},
  ): Promise<ApiReply> {
    const payload = options.raw ?? JSON.stringify(body);
    return await call('/api/v1/ingest', {
      method: 'POST',
      key: options.key,
      raw: {
        data: options.gzip ? gzipSync(payload) : payload,
        contentType: options.contentType ?? 'application/json',
      },
      headers: { ...options.headers, ...(options.gzip ? { 'content-encoding': 'gzip' } : {}) },
    });
  }

  beforeAll(async () => {
    ({ key } = await newOrganization(target().db));
  });

  describe('POST /api/v1/ingest accepts', () => {
    it('one payload with every optional part, counting one event per metric', async () => {
      const result = await send(
        {
          host: 'web-1',
          timestamp: new Date(Date.now() - 60_000).toISOString(),
          metrics: { cpu_percent: 42.5, memory_percent: 61 },
          tags: { environment: 'prod', region: 'eu-west-1' },
          docker_containers: [
            { name: 'api', image: 'api:1.2', status: 'running', cpu_percent: 3, memory_usage: 1 },
          ],
          processes: [{ name: 'node', pid: 12, cpu_percent: 30, memory_rss: 2048 }],
          agent_version: 'ignored',
        },
        { key },
      );
      expect(result).toMatchObject({ status: 200, body: { status: 'ok', events_accepted: 2 } });
    });

    it('a gzip body holding a batch of payloads', async () => {
      const base = Date.now() - 120_000;
      const batch = Array.from({ length: 50 }, (_, i) => ({
        host: `batch-${i % 5}`,
        timestamp: new Date(base + i).toISOString(),
        metrics: { cpu_percent: i, memory_percent: i / 2 },
      }));
      const result = await send(batch, { key, gzip: true });
      expect(result).toMatchObject({ status: 200, body: { events_accepted: 100 } });
    });

    it('the key as a bearer token', async () => {
      const bearer = await send(
        { host: 'bearer', metrics: { a: 1 } },
        { headers: { authorization: `Bearer ${key}` } },
      );
      expect(bearer.status).toBe(200);
    });
  });

  describe('POST /api/v1/ingest answers each client error with a problem body', () => {
    it('401 for a missing or unknown key, before reading the body', async () => {
      const missing = await send({ host: 'h', metrics: { a: 1 } });
      expect(missing).toMatchObject({ status: 401, body: problemBody(401) });
      expect(missing.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      const unknown = await send({ host: 'h', metrics: { a: 1 } }, { key: 'mon_nope' });
      expect(unknown).toMatchObject({ status: 401, body: problemBody(401) });
    });

    it('403 for a key without the ingest scope', async () => {
      const { key: readOnly } = await newOrganization(target().db, ['read']);
      expect(await send({ host: 'h', metrics: { a: 1 } }, { key: readOnly })).toMatchObject({
        status: 403,
        body: problemBody(403),
      });
    });

    it('415 for a body that is not JSON or an unknown encoding', async () => {
      const text = await send(null, { key, contentType: 'text/plain', raw: 'x' });
      expect(text).toMatchObject({ status: 415, body: problemBody(415) });
      const brotli = await send(null, { key, raw: '{}', headers: { 'content-encoding': 'br' } });
      expect(brotli).toMatchObject({ status: 415, body: problemBody(415) });
    });

    it('413 for a body over 1 MiB, also when it only grows past it after decompression', async () => {
      const big = JSON.stringify({ host: 'h', metrics: { a: 1 }, pad: 'x'.repeat(1024 * 1024) });
      expect(await send(null, { key, raw: big })).toMatchObject({
        status: 413,
        body: problemBody(413),
      });
      const bomb = await send(null, { key, raw: big, gzip: true });
      expect(bomb).toMatchObject({ status: 413, body: problemBody(413) });
    });

    it('422 naming every failing path, for malformed JSON, bad values and bad timestamps', async () => {
      const malformed = await send(null, { key, raw: '{"host":' });
      expect(malformed).toMatchObject({ status: 422, body: problemBody(422) });
      expect(malformed.body).toMatchObject({ errors: [{ path: '', message: expect.any(String) }] });
      const invalid = await send(
        [
          { host: 'ok', metrics: { a: 1 } },
          { host: '', metrics: { '9bad': 1, good: 'x' }, processes: [{ name: 'p', pid: -1 }] },
        ],
        { key },
      );
      expect(invalid.status).toBe(422);
      const paths = (invalid.body as { errors: { path: string }[] }).errors
        .map((e) => e.path)
        .sort();
      expect(paths).toEqual(
        ['[1].host', '[1].metrics["9bad"]', '[1].metrics.good', '[1].processes[0].pid'].sort(),
      );
      const future = await send(
        { host: 'h', metrics: { a: 1 }, timestamp: new Date(Date.now() + 3_600_000).toISOString() },
        { key },
      );
      expect(future).toMatchObject({
        status: 422,
        body: { errors: [{ path: 'timestamp', message: expect.stringMatching(/future/) }] },
      });
      const ancient = await send(
        { host: 'h', metrics: { a: 1 }, timestamp: '2001-01-01T00:00:00Z' },
        { key },
      );
      expect(ancient).toMatchObject({ status: 422, body: { errors: [{ path: 'timestamp' }] } });
      const tooMany = await send(
        Array.from({ length: 1001 }, () => ({ host: 'h', metrics: { a: 1 } })),
        { key },
      );
      expect(tooMany).toMatchObject({ status: 422, body: problemBody(422) });
    });

    it('405 with Allow for another method on the ingest path, 404 for an unknown route', async () => {
      const get = await call('/api/v1/ingest', { key });
      expect(get).toMatchObject({ status: 405, body: problemBody(405) });
      expect(get.headers.get('allow')).toContain('POST');
      const unknown = await fetch(`${target().ingestUrl}/api/v1/nothing-here`);
      expect(unknown.status).toBe(404);
      expect(await unknown.json()).toMatchObject(problemBody(404));
    });
  });

  it('answers only what the served OpenAPI document says', async () => {
    const response = await fetch(`${target().apiUrl}/api/v1/openapi.json`);
    expect(response.status).toBe(200);
    expect(exchanges.length).toBeGreaterThan(10);
    expectExchangesDocumented(exchanges, (await response.json()) as never);
  });
}
