import type { IncomingMessage, ServerResponse } from 'node:http';
import { describe, expect, it } from 'vitest';
import { createLogger } from '@monitor/platform';
import { rateLimitHeaderPatterns } from '@monitor/schemas';
import { createIngestRateLimiter } from './ingest-rate-limiter.js';

function response(): { res: ServerResponse; headers: Map<string, unknown> } {
  const headers = new Map<string, unknown>();
  const fake = {
    headersSent: false,
    statusCode: 200,
    setHeader(name: string, value: unknown) {
      headers.set(name, value);
      return fake;
    },
    getHeader: (name: string) => headers.get(name),
    end: () => fake,
  };
  return { res: fake as unknown as ServerResponse, headers };
}

describe('createIngestRateLimiter', () => {
  it('sends RateLimit and RateLimit-Policy in the form the OpenAPI document states', async () => {
    const limiter = createIngestRateLimiter({
      limitPerMinute: 6000,
      logger: createLogger({ level: 'silent' }),
      onStoreError: () => undefined,
    });
    const { res, headers } = response();
    const req = { headers: {}, method: 'POST', url: '/api/v1/ingest' } as IncomingMessage;
    await expect(
      limiter(req, res, { keyId: 'key_1', orgId: 'org_1', scopes: ['ingest'] }),
    ).resolves.toBe('allowed');
    expect(headers.get('RateLimit')).toMatch(new RegExp(rateLimitHeaderPatterns.RateLimit));
    expect(headers.get('RateLimit')).toMatch(/^"6000-per-minute"; r=5999; t=\d+$/);
    expect(headers.get('RateLimit-Policy')).toMatch(
      new RegExp(rateLimitHeaderPatterns['RateLimit-Policy']),
    );
    expect(headers.get('RateLimit-Policy')).toMatch(/^"6000-per-minute"; q=6000; w=60; pk=/);
  });

  it('answers a key over its limit itself with a 429, and admits the key within it', async () => {
    const limiter = createIngestRateLimiter({
      limitPerMinute: 1,
      logger: createLogger({ level: 'silent' }),
      onStoreError: () => undefined,
    });
    const key = { keyId: 'key_1', orgId: 'org_1', scopes: ['ingest'] as const };
    // A request whose body was read: nothing left to drain before the refusal.
    const request = () =>
      ({
        headers: {},
        method: 'POST',
        url: '/api/v1/ingest',
        readableEnded: true,
      }) as IncomingMessage;
    await expect(limiter(request(), response().res, key)).resolves.toBe('allowed');
    const refused = response();
    await expect(limiter(request(), refused.res, key)).resolves.toBe('answered');
    expect(refused.res.statusCode).toBe(429);
    expect(refused.headers.get('Connection')).toBe('close');
  });
});
