import { describe, expect, it } from 'vitest';
import { createPollLoop } from './poll-loop.js';

describe('createPollLoop', () => {
  it('runs again at once while work is waiting, and stops after the round in progress', async () => {
    let rounds = 0;
    let stopped: Promise<void> | undefined;
    const loop = createPollLoop({
      round: () => {
        rounds += 1;
        // Three busy rounds, then idle: the stop must end the long pause instead of waiting.
        if (rounds === 4) stopped = loop.stop();
        return Promise.resolve({ moreWaiting: rounds < 4 });
      },
      intervalMs: 3_600_000,
      onError: () => undefined,
    });
    loop.start();
    await new Promise((resolve) => setImmediate(resolve));
    await stopped;
    expect(rounds).toBe(4);
  });

  it('reports a failed round and polls again', async () => {
    const errors: unknown[] = [];
    let rounds = 0;
    const done = new Promise<void>((resolve) => {
      const loop = createPollLoop({
        round: () => {
          rounds += 1;
          if (rounds === 2) void loop.stop().then(resolve);
          return rounds === 1
            ? Promise.reject(new Error('database away'))
            : Promise.resolve({ moreWaiting: false });
        },
        intervalMs: 1,
        onError: (err) => errors.push(err),
      });
      loop.start();
    });
    await done;
    expect(errors).toEqual([new Error('database away')]);
    expect(rounds).toBe(2);
  });
});
