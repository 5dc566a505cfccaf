import { describe, expect, it } from 'vitest';
import { createLogger, redactedValue } from './logger.js';
import { createMemoryLogger } from './testing/memory-logger.js';

describe('createLogger', () => {
  it('writes one JSON object per line with the level label, name and ISO time', () => {
    const { logger, lines } = createMemoryLogger({ level: 'info', name: 'gateway' });
    logger.info({ batch: 3 }, 'batch written');
    const [line] = lines();
    expect(line).toMatchObject({ level: 'info', name: 'gateway', batch: 3, msg: 'batch written' });
    expect(line?.time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('drops lines below the level', () => {
    const { logger, lines } = createMemoryLogger({ level: 'warn' });
    logger.info('hidden');
    logger.warn('shown');
    expect(lines().map((line) => line.msg)).toEqual(['shown']);
  });

  it('redacts API keys in request headers', () => {
    const { logger, lines } = createMemoryLogger({ level: 'info' });
    logger.info(
      {
        req: {
          method: 'POST',
          headers: { 'x-api-key': 'mk_live_secret', authorization: 'Bearer mk_live_secret' },
        },
      },
      'request',
    );
    const [line] = lines();
    expect(line?.req).toEqual({
      method: 'POST',
      headers: { 'x-api-key': redactedValue, authorization: redactedValue },
    });
  });

  it('redacts credential-like fields at the top level and one level down', () => {
    const { logger, lines } = createMemoryLogger({ level: 'info' });
    logger.info(
      {
        apiKey: 'k1',
        key: { api_key: 'k2', id: 'key_1' },
        channel: { secret: 'k3', type: 'webhook' },
        user: { password: 'k4' },
      },
      'created',
    );
    const text = JSON.stringify(lines());
    expect(text).not.toMatch(/"k[1-4]"/);
    expect(lines()[0]).toMatchObject({
      apiKey: redactedValue,
      key: { api_key: redactedValue, id: 'key_1' },
      channel: { secret: redactedValue, type: 'webhook' },
    });
  });

  it('redacts extra paths a caller asks for', () => {
    const { logger, lines } = createMemoryLogger({
      level: 'info',
      redact: ['channel.webhook_url'],
    });
    logger.info({ channel: { webhook_url: 'https://hooks.example/abc' } }, 'sent');
    expect(lines()[0]).toMatchObject({ channel: { webhook_url: redactedValue } });
  });

  it('serializes errors under err with their stack and code', () => {
    const { logger, lines } = createMemoryLogger({ level: 'info' });
    const err = Object.assign(new Error('boom'), { code: 'ECONNREFUSED' });
    logger.error({ err }, 'failed');
    expect(lines()[0]).toMatchObject({
      level: 'error',
      err: { type: 'Error', message: 'boom', code: 'ECONNREFUSED' },
    });
    expect((lines()[0]?.err as { stack: string }).stack).toContain('Error: boom');
  });

  it('keeps redaction in child loggers', () => {
    const { logger, lines } = createMemoryLogger({ level: 'info' });
    logger.child({ component: 'auth' }).info({ secret: 'x' }, 'checked');
    expect(lines()[0]).toMatchObject({ component: 'auth', secret: redactedValue });
  });
});

describe('createLogger with the pretty format', () => {
  it('writes a readable line with the level, message and fields, still redacted', () => {
    const chunks: string[] = [];
    const logger = createLogger({
      level: 'info',
      name: 'monitor-all',
      format: 'pretty',
      destination: { write: (chunk) => chunks.push(chunk) },
    });
    logger.info({ method: 'GET', status: 200, apiKey: 'mon_secret_key' }, 'request');
    const text = chunks.join('');
    expect(text).toMatch(/^\[\d\d:\d\d:\d\d\.\d{3}\] INFO \(monitor-all\): request \{.*\}\n$/);
    expect(text).toContain('"status":200');
    expect(text).not.toContain('mon_secret_key');
    expect(() => {
      JSON.parse(text);
    }).toThrow();
  });
});
