import { describe, expect, it } from 'vitest';
import { createConcurrencySlots } from './concurrency-slots.js';

describe('createConcurrencySlots', () => {
  it('lets `count` holders in at once and hands each released slot to the longest waiter', async () => {
    const slots = createConcurrencySlots(2);
    const entered: string[] = [];
    const enter = (name: string) => slots.acquire().then(() => entered.push(name));
    await Promise.all([enter('a'), enter('b')]);
    const waiting = [enter('c'), enter('d')];
    await Promise.resolve();
    expect(entered).toEqual(['a', 'b']);
    slots.release();
    await waiting[0];
    expect(entered).toEqual(['a', 'b', 'c']);
    slots.release();
    await waiting[1];
    expect(entered).toEqual(['a', 'b', 'c', 'd']);
  });
});
