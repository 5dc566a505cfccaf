import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ConsumedRecord } from './bus.js';
import type { ConsumerBatchPorts, FailureHandling } from './consumer-batch-policy.js';
import { createConsumerBatchPolicy } from './consumer-batch-policy.js';

function record(offset: number): ConsumedRecord {
  return {
    topic: 'samples',
    partition: 0,
    offset: String(offset),
    key: null,
    value: null,
    headers: {},
    timestampMs: 0,
  };
}

/** One of a record's items (a host of a record); `poison` fails for good every time. */
type Item = {
  id: string;
  record: ConsumedRecord;
  poison: boolean;
  /** How many more attempts that include it fail for good before it works. */
  failures: number;
};

class Failure extends Error {
  constructor(readonly handling: FailureHandling) {
    super(handling);
  }
}

/**
 * A consumer over items that fails the way storage does: all or nothing, for good while a
 * poison or still-failing item is in the work, transiently when the schedule says so. It keeps
 * what it processed, committed past and set aside, in order.
 */
function fakeConsumer(transientSchedule: readonly boolean[] = [], redeliverAtCall?: number) {
  const log = {
    processed: [] as string[],
    committed: [] as string[],
    setAside: [] as string[],
    commitsPast: [] as string[],
    waits: [] as number[],
    retries: [] as number[],
    attempts: [] as number[],
  };
  let calls = 0;
  const fail = (items: readonly Item[]): void => {
    calls++;
    if (calls === redeliverAtCall) throw new Failure('redeliver');
    if (transientSchedule[calls - 1] === true) throw new Failure('retry');
    let failing = false;
    for (const item of items) {
      if (item.poison) failing = true;
      else if (item.failures > 0) {
        item.failures--;
        failing = true;
      }
    }
    if (failing) throw new Failure('isolate');
  };
  const ports: ConsumerBatchPorts<Item> = {
    recordOf: (item) => item.record,
    process(items) {
      fail(items);
      log.processed.push(...items.map((item) => item.id));
      for (const item of items) {
        if (log.committed.at(-1) !== item.record.offset) log.committed.push(item.record.offset);
      }
      return Promise.resolve();
    },
    splitRecord: (items) => items,
    processAlone(item) {
      fail([item]);
      log.processed.push(item.id);
      return Promise.resolve();
    },
    setAside(item) {
      log.setAside.push(item.id);
      return Promise.resolve();
    },
    commitPast(rec) {
      fail([]);
      log.committed.push(rec.offset);
      log.commitsPast.push(rec.offset);
      return Promise.resolve();
    },
    handlingOf: (err) => (err instanceof Failure ? err.handling : 'isolate'),
    onRetry: (_err, retryInMs, attempt) => {
      log.retries.push(retryInMs);
      log.attempts.push(attempt);
    },
    sleep: (ms) => {
      log.waits.push(ms);
      return Promise.resolve();
    },
  };
  return { ports, log };
}

/** Items of records at offsets 0, 1, …: `shape[i]` lists record i's items as 'ok' | 'poison' | attempts failing. */
function itemsOf(shape: readonly (readonly ('ok' | 'poison' | number)[])[]): Item[] {
  return shape.flatMap((kinds, offset) => {
    const rec = record(offset);
    return kinds.map((kind, index) => ({
      id: `${offset}.${index}`,
      record: rec,
      poison: kind === 'poison',
      failures: typeof kind === 'number' ? kind : 0,
    }));
  });
}

describe('createConsumerBatchPolicy', () => {
  it('processes a batch that works in one call', async () => {
    const { ports, log } = fakeConsumer();
    const items = itemsOf([['ok', 'ok'], ['ok']]);
    await createConsumerBatchPolicy(ports, { attemptsBeforeSetAside: 1 }).handle(items);
    expect(log.processed).toEqual(['0.0', '0.1', '1.0']);
    expect(log.committed).toEqual(['0', '1']);
    expect(log.setAside).toEqual([]);
  });

  it('retries a transient failure in place, its wait doubling up to the ceiling', async () => {
    const { ports, log } = fakeConsumer([true, true, true, true]);
    const policy = createConsumerBatchPolicy(ports, {
      attemptsBeforeSetAside: 1,
      retryInitialMs: 10,
      retryMaxMs: 30,
    });
    await policy.handle(itemsOf([['ok']]));
    expect(log.retries).toEqual([10, 20, 30, 30]);
    expect(log.attempts).toEqual([1, 2, 3, 4]);
    expect(log.waits).toEqual([10, 20, 30, 30]);
    expect(log.processed).toEqual(['0.0']);
  });

  it('sets aside the record that fails for good, the others processed in order', async () => {
    const { ports, log } = fakeConsumer();
    const items = itemsOf([['ok'], ['ok'], ['poison'], ['ok'], ['ok']]);
    await createConsumerBatchPolicy(ports, { attemptsBeforeSetAside: 1 }).handle(items);
    expect(log.processed).toEqual(['0.0', '1.0', '3.0', '4.0']);
    expect(log.setAside).toEqual(['2.0']);
    expect(log.committed).toEqual(['0', '1', '2', '3', '4']);
  });

  it('attempts a lone failing record again after the given waits before it sets it aside', async () => {
    const { ports, log } = fakeConsumer();
    const policy = createConsumerBatchPolicy(ports, {
      attemptsBeforeSetAside: 3,
      reattemptDelayMs: (attempt) => 100 * attempt,
    });
    await policy.handle(itemsOf([['poison']]));
    expect(log.waits).toEqual([200, 300]);
    expect(log.setAside).toEqual(['0.0']);
    expect(log.commitsPast).toEqual(['0']);
  });

  it('keeps a record whose failures stop before its last attempt', async () => {
    const { ports, log } = fakeConsumer();
    const policy = createConsumerBatchPolicy(ports, { attemptsBeforeSetAside: 3 });
    await policy.handle(itemsOf([[2]]));
    expect(log.processed).toEqual(['0.0']);
    expect(log.setAside).toEqual([]);
  });

  it('takes the items of a record that keeps failing alone, sets aside the one that fails, then commits past the record', async () => {
    const { ports, log } = fakeConsumer();
    const items = itemsOf([['ok'], ['ok', 'poison', 'ok'], ['ok']]);
    await createConsumerBatchPolicy(ports, { attemptsBeforeSetAside: 1 }).handle(items);
    expect(log.processed).toEqual(['0.0', '1.0', '1.2', '2.0']);
    expect(log.setAside).toEqual(['1.1']);
    expect(log.committed).toEqual(['0', '1', '2']);
    expect(log.commitsPast).toEqual(['1']);
  });

  it('sets aside the items a record splits into, when they are not the items it was given', async () => {
    const setAside: string[] = [];
    const alone: string[] = [];
    const whole = record(7);
    const hosts = ['a', 'bad', 'c'].map((host) => ({ ...whole, key: host }));
    const policy = createConsumerBatchPolicy<ConsumedRecord>(
      {
        recordOf: (rec) => rec,
        process: () => Promise.reject(new Error('bad host')),
        splitRecord: () => hosts,
        processAlone: (host) => {
          alone.push(host.key ?? '');
          return host.key === 'bad' ? Promise.reject(new Error('bad host')) : Promise.resolve();
        },
        setAside: (rec, err) => {
          setAside.push(`${rec.key}: ${err.message}`);
          return Promise.resolve();
        },
        commitPast: () => Promise.resolve(),
        handlingOf: () => 'isolate',
      },
      { attemptsBeforeSetAside: 1 },
    );
    await policy.handle([whole]);
    expect(alone).toEqual(['a', 'bad', 'c']);
    expect(setAside).toEqual(['bad: bad host']);
  });

  it('throws a failure to redeliver at once, without halving the batch', async () => {
    const { ports, log } = fakeConsumer([], 1);
    const policy = createConsumerBatchPolicy(ports, { attemptsBeforeSetAside: 3 });
    await expect(policy.handle(itemsOf([['ok'], ['poison']]))).rejects.toMatchObject({
      handling: 'redeliver',
    });
    expect(log).toMatchObject({ processed: [], committed: [], setAside: [] });
  });

  it('throws when committing past a set-aside record fails for good, so the batch is redelivered', async () => {
    const { ports } = fakeConsumer();
    const policy = createConsumerBatchPolicy(
      { ...ports, commitPast: () => Promise.reject(new Error('storage broken')) },
      { attemptsBeforeSetAside: 1 },
    );
    await expect(policy.handle(itemsOf([['poison']]))).rejects.toThrow('storage broken');
  });

  it('retrying retries transient failures and throws a permanent one', async () => {
    const { ports, log } = fakeConsumer([true, true]);
    const policy = createConsumerBatchPolicy(ports, { attemptsBeforeSetAside: 1 });
    await policy.retrying(() => ports.commitPast(record(3)));
    expect(log.committed).toEqual(['3']);
    expect(log.retries).toHaveLength(2);
    await expect(policy.retrying(() => Promise.reject(new Error('for good')))).rejects.toThrow(
      'for good',
    );
  });
});

/** Records of 1–4 items each, some poison, some failing a few attempts before they work. */
const shapeArbitrary = (maxFailures: number) =>
  fc.array(
    fc.array(
      fc.oneof(
        { weight: 6, arbitrary: fc.constant('ok' as const) },
        { weight: 2, arbitrary: fc.constant('poison' as const) },
        { weight: 1, arbitrary: fc.integer({ min: 1, max: Math.max(1, maxFailures) }) },
      ),
      { minLength: 1, maxLength: 4 },
    ),
    { minLength: 1, maxLength: 24 },
  );

describe('createConsumerBatchPolicy over random batches', () => {
  it('sets aside exactly the poison items, processes every other item once and in order, and commits past every record once, in order', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 1, max: 3 }).chain((attempts) =>
          fc.record({
            attempts: fc.constant(attempts),
            // Failures that stop within the attempts a record gets, so they never set it aside.
            shape: shapeArbitrary(attempts - 1).map((shape) =>
              shape.map((kinds) =>
                kinds.map((kind) => (typeof kind === 'number' && attempts === 1 ? 'ok' : kind)),
              ),
            ),
            transient: fc.array(fc.boolean(), { maxLength: 60 }),
          }),
        ),
        async ({ attempts, shape, transient }) => {
          const items = itemsOf(shape);
          const { ports, log } = fakeConsumer(transient);
          await createConsumerBatchPolicy(ports, { attemptsBeforeSetAside: attempts }).handle(
            items,
          );
          const poison = items.filter((item) => item.poison).map((item) => item.id);
          expect(log.setAside).toEqual(poison);
          expect(log.processed).toEqual(
            items.filter((item) => !item.poison).map((item) => item.id),
          );
          expect(log.committed).toEqual(shape.map((_, offset) => String(offset)));
          const poisoned = shape.flatMap((kinds, offset) =>
            kinds.includes('poison') ? [String(offset)] : [],
          );
          expect(log.commitsPast).toEqual(poisoned);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('redelivers from where a failure to redeliver stopped it: what it did is a prefix of a run without it', async () => {
    await fc.assert(
      fc.asyncProperty(
        shapeArbitrary(0).map((shape) =>
          shape.map((kinds) => kinds.map((kind) => (kind === 'poison' ? kind : 'ok'))),
        ),
        fc.integer({ min: 1, max: 40 }),
        async (shape, redeliverAtCall) => {
          const full = fakeConsumer();
          await createConsumerBatchPolicy(full.ports, { attemptsBeforeSetAside: 1 }).handle(
            itemsOf(shape),
          );
          const cut = fakeConsumer([], redeliverAtCall);
          const run = createConsumerBatchPolicy(cut.ports, { attemptsBeforeSetAside: 1 }).handle(
            itemsOf(shape),
          );
          const outcome = await run.then(
            () => 'done',
            (err: unknown) => (err instanceof Failure ? err.handling : 'other'),
          );
          if (outcome === 'done') {
            expect(cut.log).toEqual(full.log);
            return;
          }
          expect(outcome).toBe('redeliver');
          for (const key of ['processed', 'committed', 'setAside'] as const) {
            expect(full.log[key].slice(0, cut.log[key].length)).toEqual(cut.log[key]);
          }
        },
      ),
      { numRuns: 200 },
    );
  });
});
