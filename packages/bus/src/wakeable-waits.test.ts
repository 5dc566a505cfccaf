import { describe, expect, it } from 'vitest';
import type { PartitionLog } from './in-process-log.js';
import { createWakeableWaits } from './wakeable-waits.js';

describe('createWakeableWaits', () => {
  it('ends a sleep and a wait for an append on wakeAll, leaving no waiter behind', async () => {
    const waits = createWakeableWaits();
    const partitionLog: PartitionLog = { records: [], first: 0, end: 0, appendWaiters: new Set() };
    const sleeping = waits.sleep(60_000);
    const waiting = waits.waitForAppend(partitionLog);
    waits.wakeAll();
    await Promise.all([sleeping, waiting]);
    expect(partitionLog.appendWaiters.size).toBe(0);
  });

  it('ends a wait for an append when the partition calls its waiters', async () => {
    const waits = createWakeableWaits();
    const partitionLog: PartitionLog = { records: [], first: 0, end: 0, appendWaiters: new Set() };
    const waiting = waits.waitForAppend(partitionLog);
    for (const waiter of [...partitionLog.appendWaiters]) waiter();
    await waiting;
    expect(partitionLog.appendWaiters.size).toBe(0);
  });
});
