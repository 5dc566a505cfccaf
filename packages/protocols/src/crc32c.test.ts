import { describe, expect, it } from 'vitest';
import { crc32c } from './crc32c.js';

describe('crc32c', () => {
  it('gives the check values of the Castagnoli polynomial', () => {
    // RFC 3720 (iSCSI) B.4 and the catalogue's "123456789" check value.
    expect(crc32c(new TextEncoder().encode('123456789'))).toBe(0xe3069283);
    expect(crc32c(new Uint8Array(32))).toBe(0x8a9136aa);
    expect(crc32c(new Uint8Array(32).fill(0xff))).toBe(0x62a8ab43);
    expect(crc32c(new Uint8Array(0))).toBe(0);
  });
});
