import fc from 'fast-check';
import { compressSync as compress } from 'snappy';
import { describe, expect, it } from 'vitest';
import { ProtocolDecodeError } from './protocol-decode-error.js';
import { decompressSnappyBlock, readSnappyDecodedLength } from './snappy-block.js';

const protocol = 'prometheus_remote_write_v1';

describe('readSnappyDecodedLength', () => {
  it('reads the varint preamble', () => {
    expect(readSnappyDecodedLength(new Uint8Array([0x00]))).toBe(0);
    expect(readSnappyDecodedLength(new Uint8Array([0x7f]))).toBe(127);
    expect(readSnappyDecodedLength(new Uint8Array([0x80, 0x01]))).toBe(128);
    expect(readSnappyDecodedLength(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f]))).toBe(
      0xffffffff,
    );
  });

  it('refuses a preamble that is cut short or longer than 32 bits', () => {
    expect(readSnappyDecodedLength(new Uint8Array([]))).toBeUndefined();
    expect(readSnappyDecodedLength(new Uint8Array([0x80]))).toBeUndefined();
    expect(readSnappyDecodedLength(new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x1f]))).toBeUndefined();
    expect(
      readSnappyDecodedLength(new Uint8Array([0x80, 0x80, 0x80, 0x80, 0x80, 0x01])),
    ).toBeUndefined();
  });
});

describe('decompressSnappyBlock', () => {
  it('returns what was compressed', () => {
    const data = new TextEncoder().encode('node_cpu_seconds_total '.repeat(100));
    expect(decompressSnappyBlock(compress(data), 1_000_000, protocol)).toEqual(data);
  });

  it('refuses a bomb from its preamble alone: 4 GiB declared in 6 bytes', () => {
    const bomb = new Uint8Array([0xff, 0xff, 0xff, 0xff, 0x0f, 0x00]);
    expect(() => decompressSnappyBlock(bomb, 10_000_000, protocol)).toThrow(
      expect.objectContaining({
        code: 'body_too_large',
        protocol,
        message: 'The body decompresses to 4294967295 bytes, more than the limit of 10000000.',
      }),
    );
  });

  it('takes a body that decompresses to exactly the limit', () => {
    const data = new Uint8Array(1000).fill(7);
    expect(decompressSnappyBlock(compress(data), 1000, protocol)).toHaveLength(1000);
    expect(() => decompressSnappyBlock(compress(data), 999, protocol)).toThrow(
      expect.objectContaining({ code: 'body_too_large' }),
    );
  });

  it('throws only a malformed_body ProtocolDecodeError on arbitrary bytes', () => {
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 64 }), (bytes) => {
        try {
          decompressSnappyBlock(bytes, 4096, protocol);
        } catch (err) {
          expect(err).toBeInstanceOf(ProtocolDecodeError);
          expect((err as ProtocolDecodeError).code).toMatch(/^(malformed_body|body_too_large)$/);
        }
      }),
      { numRuns: 2000 },
    );
  });

  it('refuses at once a short body whose literal length wraps around (it stalls snappyjs)', () => {
    const crafted = Buffer.from(
      '48fce79d46b69b34d791a3d016697172674baee81f057f678dde0260387382a2247d9708',
      'hex',
    );
    const started = performance.now();
    expect(() => decompressSnappyBlock(crafted, 4096, protocol)).toThrow(
      expect.objectContaining({ code: 'malformed_body' }),
    );
    expect(performance.now() - started).toBeLessThan(100);
  });

  it('refuses a truncated stream', () => {
    const whole = compress(new TextEncoder().encode('abcdefgh'.repeat(50)));
    expect(() =>
      decompressSnappyBlock(whole.subarray(0, whole.length - 3), 1 << 20, protocol),
    ).toThrow(expect.objectContaining({ code: 'malformed_body' }));
  });
});
