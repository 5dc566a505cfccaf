import { describe, expect, it } from 'vitest';
import { murmur2, partitionForKey } from './murmur2.js';

describe('murmur2', () => {
  it('matches the Java client (Kafka UtilsTest vectors)', () => {
    expect(murmur2('21')).toBe(-973932308);
    expect(murmur2('foobar')).toBe(-790332482);
    expect(murmur2('a-little-bit-long-string')).toBe(-985981536);
    expect(murmur2('a-little-bit-longer-string')).toBe(-1486304829);
    expect(murmur2('lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8')).toBe(-58897971);
    expect(murmur2(Buffer.from([0x61, 0x62, 0x63]))).toBe(479470107);
  });
});

describe('partitionForKey', () => {
  it('picks a stable partition within range', () => {
    for (const partitions of [1, 3, 12]) {
      for (const key of ['org_1:host-a', 'org_1:host-b', '', 'ü€']) {
        const partition = partitionForKey(key, partitions);
        expect(partition).toBeGreaterThanOrEqual(0);
        expect(partition).toBeLessThan(partitions);
        expect(partitionForKey(key, partitions)).toBe(partition);
      }
    }
  });
});
