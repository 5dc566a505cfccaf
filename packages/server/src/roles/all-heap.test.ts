import { setFlagsFromString } from 'node:v8';
import { Worker } from 'node:worker_threads';
import { describe, expect, it } from 'vitest';
import { consumersResourceLimits } from './all-heap.js';

/** Allocates short-lived objects until the young generation has grown, then reports its size. */
const measureYoungGeneration = `
const { parentPort } = require('node:worker_threads');
const { getHeapSpaceStatistics } = require('node:v8');
let kept = [];
for (let i = 0; i < 3e6; i++) {
  kept.push({ i });
  if (kept.length > 1e5) kept = [];
}
const newSpace = getHeapSpaceStatistics().find((space) => space.space_name === 'new_space');
parentPort.postMessage(newSpace.space_size / 1024 / 1024);
`;

function youngGenerationMiB(worker: Worker): Promise<number> {
  return new Promise((resolve, reject) => {
    worker.once('message', (size: number) => resolve(size));
    worker.once('error', reject);
  });
}

describe('consumersResourceLimits', () => {
  it('gives the consumers thread its own young generation over the process flag', async () => {
    // As `node --max-semi-space-size=32` (the image's flag) would have set it at start.
    setFlagsFromString('--max-semi-space-size=32');
    const limits = consumersResourceLimits({
      CONSUMERS_SEMI_SPACE_MB: 4,
      HEAP_GROWING_PERCENT: 100,
    });
    expect(limits).toEqual({ maxYoungGenerationSizeMb: 12 });
    const worker = new Worker(measureYoungGeneration, { eval: true, resourceLimits: limits });
    try {
      // Two semi-spaces of 4 MiB at most, where the flag would have allowed 64 MiB.
      expect(await youngGenerationMiB(worker)).toBeLessThanOrEqual(8);
    } finally {
      await worker.terminate();
    }
  });
});
