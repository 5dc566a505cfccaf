import { describe, expect, it } from 'vitest';
import { allSettled } from './cancelable.js';

describe('allSettled', () => {
  it('rejects with the first failure only once every read has settled', async () => {
    let slowDone = false;
    const slow = new Promise<number>((resolve) =>
      setImmediate(() => {
        slowDone = true;
        resolve(1);
      }),
    );
    const failed = Promise.reject(new Error('first'));
    const later = Promise.reject(new Error('second'));
    await expect(allSettled([slow, failed, later])).rejects.toThrow('first');
    expect(slowDone).toBe(true);
  });

  it('answers every value in order', async () => {
    expect(await allSettled([Promise.resolve('a'), Promise.resolve(2)])).toEqual(['a', 2]);
  });
});
