import { describe, expect, it } from 'vitest';
import { createBatchAccumulator } from './batch-accumulator.js';

describe('createBatchAccumulator', () => {
  it('flushes as soon as the size cap is reached', async () => {
    const flushed: number[][] = [];
    const acc = createBatchAccumulator<number>({
      maxItems: 3,
      maxWaitMs: 60_000,
      flush: (items) => {
        flushed.push(items);
        return Promise.resolve();
      },
    });
    await Promise.all([acc.add([1, 2]), acc.add([3])]);
    expect(flushed).toEqual([[1, 2, 3]]);
  });

  it('flushes what arrived within the wait after the first item', async () => {
    const flushed: number[][] = [];
    const acc = createBatchAccumulator<number>({
      maxItems: 100,
      maxWaitMs: 5,
      flush: (items) => {
        flushed.push(items);
        return Promise.resolve();
      },
    });
    await acc.add([1]);
    await acc.add([2]);
    expect(flushed).toEqual([[1], [2]]);
  });

  it('rejects every caller whose items were in a failed flush, and only those', async () => {
    let fail = true;
    const acc = createBatchAccumulator<number>({
      maxItems: 2,
      maxWaitMs: 60_000,
      flush: () => (fail ? Promise.reject(new Error('boom')) : Promise.resolve()),
    });
    const first = acc.add([1]);
    const second = acc.add([2]);
    await expect(first).rejects.toThrow('boom');
    await expect(second).rejects.toThrow('boom');
    fail = false;
    await expect(Promise.all([acc.add([3]), acc.add([4])])).resolves.toBeDefined();
  });

  it('keeps flushes in order, one at a time', async () => {
    const events: string[] = [];
    const acc = createBatchAccumulator<number>({
      maxItems: 1,
      maxWaitMs: 60_000,
      flush: async (items) => {
        events.push(`start ${items[0]}`);
        await new Promise((r) => setTimeout(r, 5));
        events.push(`end ${items[0]}`);
      },
    });
    await Promise.all([acc.add([1]), acc.add([2])]);
    expect(events).toEqual(['start 1', 'end 1', 'start 2', 'end 2']);
  });

  it('with no wait, flushes what was added in the same turn of the event loop together', async () => {
    const flushed: number[][] = [];
    const acc = createBatchAccumulator<number>({
      maxItems: 100,
      maxWaitMs: 0,
      flush: (items) => {
        flushed.push(items);
        return Promise.resolve();
      },
    });
    await Promise.all([acc.add([1]), acc.add([2])]);
    await acc.add([3]);
    expect(flushed).toEqual([[1, 2], [3]]);
  });
});
