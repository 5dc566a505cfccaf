import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { describe, expect, it } from 'vitest';
import { readBody } from './read-body.js';

function request(body: Buffer, headers: Record<string, string> = {}): IncomingMessage {
  const stream = Readable.from(chunks(body, 16 * 1024)) as unknown as IncomingMessage;
  stream.headers = headers;
  return stream;
}

function* chunks(body: Buffer, size: number): Generator<Buffer> {
  for (let i = 0; i < body.length; i += size) yield body.subarray(i, i + size);
}

describe('readBody', () => {
  it('reads a plain body', async () => {
    await expect(readBody(request(Buffer.from('{"a":1}')), 1024)).resolves.toEqual({
      ok: true,
      body: Buffer.from('{"a":1}'),
    });
  });

  it('inflates a gzip body', async () => {
    const body = Buffer.from(JSON.stringify({ host: 'h' }));
    const result = await readBody(request(gzipSync(body), { 'content-encoding': 'gzip' }), 1024);
    expect(result).toEqual({ ok: true, body });
  });

  it('refuses a declared length over the limit without reading', async () => {
    const result = await readBody(request(Buffer.alloc(10), { 'content-length': '2000' }), 1024);
    expect(result).toEqual({ ok: false, reason: 'too_large' });
  });

  it('stops a streamed body at the limit', async () => {
    const result = await readBody(request(Buffer.alloc(100 * 1024)), 64 * 1024);
    expect(result).toEqual({ ok: false, reason: 'too_large' });
  });

  it('stops a gzip bomb once the inflated size passes the limit', async () => {
    const bomb = gzipSync(Buffer.alloc(50 * 1024 * 1024));
    expect(bomb.length).toBeLessThan(100 * 1024);
    const result = await readBody(request(bomb, { 'content-encoding': 'gzip' }), 1024 * 1024);
    expect(result).toEqual({ ok: false, reason: 'too_large' });
  });

  it('rejects corrupt gzip and unknown encodings', async () => {
    await expect(
      readBody(request(Buffer.from('nope'), { 'content-encoding': 'gzip' }), 1024),
    ).resolves.toEqual({ ok: false, reason: 'bad_encoding' });
    await expect(
      readBody(request(Buffer.from('x'), { 'content-encoding': 'br' }), 1024),
    ).resolves.toEqual({ ok: false, reason: 'bad_encoding' });
  });
});
