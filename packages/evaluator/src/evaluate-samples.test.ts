import { describe, expect, it } from 'vitest';
import type { RecordBatch } from '@monitor/bus';
import { buildLiveRule } from './testing/live-rule.js';
import type { Sample } from './testing/evaluator-harness.js';
import { at, topic, record, packed, batch, ctx, harness } from './testing/evaluator-harness.js';

/**
 * Which rules take a sample (organization, metric, scope, time order, series), the windows
 * they keep, and the watched metrics noted for rules with no data on.
 */
describe('evaluateSamples', () => {
  it('skips NaN and infinite values: no threshold compares against them', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu' })]);
    await h.evaluator.handleBatch(
      batch(
        0,
        { host: 'web-1', minutes: 0, cpu: Number.POSITIVE_INFINITY, labelled: true },
        { host: 'web-1', minutes: 1, cpu: Number.NaN, labelled: true },
        { host: 'web-1', minutes: 2, cpu: 95, labelled: true },
      ),
      ctx,
    );
    expect(h.calls.commits[0]!.events).toEqual([
      {
        orgId: 'org_1',
        host: 'web-1',
        ruleId: 'rul_cpu',
        type: 'fire',
        startedMs: at(2),
        firedMs: at(2),
        value: 95,
      },
    ]);
  });

  it('applies a rule only to its organization, its metric and the hosts its scope selects', async () => {
    const h = harness([
      buildLiveRule({ id: 'rul_all' }),
      buildLiveRule({ id: 'rul_prod', scope: { env: 'prod' } }),
      buildLiveRule({ id: 'rul_mem', metric: 'memory_percent', threshold: 0 }),
    ]);
    await h.evaluator.handleBatch(
      batch(
        0,
        { host: 'web-1', minutes: 0, cpu: 95, tags: { env: 'prod', team: 'a' } },
        { host: 'web-2', minutes: 0, cpu: 95, tags: { env: 'staging' } },
        { host: 'web-3', minutes: 0, cpu: 95, org: 'org_2', tags: { env: 'prod' } },
        { host: 'web-4', minutes: 0, tags: { env: 'prod' } },
      ),
      ctx,
    );
    expect(h.alerts.map((a) => [a.host, a.ruleId])).toEqual([
      ['web-1', 'rul_all'],
      ['web-1', 'rul_prod'],
      ['web-2', 'rul_all'],
      ['web-4', 'rul_mem'],
    ]);
    expect(h.counters.evaluated).toBe(4);
  });

  it('ignores a sample not newer than the newest one evaluated on the host’s metric, on ok windows too', async () => {
    const h = harness([
      buildLiveRule({ id: 'rul_a', durationMinutes: 0 }),
      buildLiveRule({ id: 'rul_b', durationMinutes: 0, threshold: 50 }),
    ]);
    await h.evaluator.handleBatch(
      batch(0, { host: 'web-1', minutes: 5, cpu: 10 }, { host: 'web-1', minutes: 3, cpu: 95 }),
      ctx,
    );
    await h.evaluator.handleBatch(batch(2, { host: 'web-1', minutes: 5, cpu: 95 }), ctx);
    expect(h.alerts).toEqual([]);
    expect(h.counters.evaluated).toBe(6);
    await h.evaluator.handleBatch(batch(3, { host: 'web-1', minutes: 6, cpu: 60 }), ctx);
    expect(h.alerts.map((a) => [a.ruleId, a.firedMs])).toEqual([['rul_b', at(6)]]);
    await h.evaluator.handleBatch(batch(4, { host: 'web-1', minutes: 5.5, cpu: 95 }), ctx);
    expect(h.alerts).toHaveLength(1);
  });

  it('takes the first of several series of a host at one time, whatever their labels, and a replay changes nothing', async () => {
    const h = harness([
      buildLiveRule({ id: 'rul_any', durationMinutes: 0 }),
      buildLiveRule({ id: 'rul_cpu1', durationMinutes: 0, scope: { cpu: '1' } }),
    ]);
    const series = (minutes: number, cpu: string, value: number): Sample => ({
      host: 'web-1',
      minutes,
      cpu: value,
      tags: { cpu },
      labelled: true,
    });
    const records: RecordBatch = {
      topic,
      partition: 0,
      records: [
        packed(0, [series(1, '0', 10), series(1, '1', 95)]),
        record(1, series(2, '1', 96)),
        record(2, series(2, '0', 97)),
      ],
      logEndOffset: 3,
    };
    await h.evaluator.handleBatch(records, ctx);
    await h.evaluator.handleBatch(records, ctx);
    await h.newEvaluator().handleBatch(records, ctx);
    // Per (rule, host), a time's first sample in log order is evaluated and the later ones at
    // that time are not newer: the unscoped rule takes cpu 0 at 1 and cpu 1 at 2. The scoped
    // rule sees only its series.
    expect(h.alerts.map((a) => [a.ruleId, a.status, a.startedMs, a.value])).toEqual([
      ['rul_cpu1', 'active', at(1), 95],
      ['rul_any', 'active', at(2), 96],
    ]);
    expect(h.counters.fired).toBe(2);
  });

  it('lets a rule added later take a sample older than the host’s watermark, then keeps its own', async () => {
    const old = buildLiveRule({ id: 'rul_old', durationMinutes: 0, generation: 1 });
    const h = harness([old]);
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 5, cpu: 10 }), ctx);
    h.setRules([
      old,
      buildLiveRule({ id: 'rul_new', durationMinutes: 0, threshold: 50, generation: 2 }),
    ]);
    // Older than what rul_old evaluated, but rul_new has evaluated nothing on web-1 yet.
    await h.evaluator.handleBatch(batch(1, { host: 'web-1', minutes: 3, cpu: 40 }), ctx);
    expect(JSON.parse(h.states.get('org_1/web-1/rul_new')!)).toEqual({
      v: 2,
      status: 'ok',
      lastSampleMs: at(3),
    });
    // After a restart: older than rul_new's own sample, ignored; between the two, rul_new only.
    const restarted = h.newEvaluator();
    await restarted.handleBatch(batch(2, { host: 'web-1', minutes: 2, cpu: 95 }), ctx);
    expect(h.alerts).toEqual([]);
    await restarted.handleBatch(batch(3, { host: 'web-1', minutes: 4, cpu: 95 }), ctx);
    expect(h.alerts.map((a) => [a.ruleId, a.firedMs])).toEqual([['rul_new', at(4)]]);
    // A sample newer than every rule's: both take it, and rul_new needs no row of its own.
    await restarted.handleBatch(batch(4, { host: 'web-1', minutes: 6, cpu: 30 }), ctx);
    expect(h.alerts.map((a) => [a.ruleId, a.status])).toEqual([['rul_new', 'resolved']]);
    expect(h.states.size).toBe(0);
  });

  it('keeps a scoped rule’s own last sample while the host’s tags left its scope', async () => {
    const h = harness([
      buildLiveRule({ id: 'rul_all', durationMinutes: 0 }),
      buildLiveRule({ id: 'rul_prod', durationMinutes: 0, scope: { env: 'prod' } }),
    ]);
    await h.evaluator.handleBatch(
      batch(
        0,
        { host: 'web-1', minutes: 1, cpu: 10, tags: { env: 'prod' } },
        { host: 'web-1', minutes: 5, cpu: 10, tags: { env: 'staging' } },
      ),
      ctx,
    );
    // Out of order: older than rul_all's newest sample, newer than rul_prod's.
    await h
      .newEvaluator()
      .handleBatch(batch(2, { host: 'web-1', minutes: 3, cpu: 95, tags: { env: 'prod' } }), ctx);
    expect(h.alerts.map((a) => [a.ruleId, a.firedMs])).toEqual([['rul_prod', at(3)]]);
  });

  it('checkpoints a pending window’s own last sample time on every sample it takes', async () => {
    const h = harness([buildLiveRule({ id: 'rul_cpu', durationMinutes: 5 })]);
    await h.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 0, cpu: 95 }), ctx);
    await h.evaluator.handleBatch(batch(1, { host: 'web-1', minutes: 2, cpu: 96 }), ctx);
    expect(JSON.parse(h.states.get('org_1/web-1/rul_cpu')!)).toEqual({
      v: 2,
      status: 'pending',
      lastSampleMs: at(2),
      startedMs: at(0),
    });
    // The restarted process knows the window's last sample, so an older one is still ignored.
    const restarted = h.newEvaluator();
    await restarted.handleBatch(batch(2, { host: 'web-1', minutes: 1, cpu: 10 }), ctx);
    await restarted.handleBatch(batch(3, { host: 'web-1', minutes: 5, cpu: 97 }), ctx);
    expect(h.alerts).toMatchObject([{ startedMs: at(0), firedMs: at(5) }]);
  });

  it('keeps a flapping window across batches and a restart, then stores where it settled', async () => {
    const h = harness([
      buildLiveRule({ id: 'rul_flap', flapping: { windowMinutes: 10, maxTransitions: 2 } }),
    ]);
    const samples: Sample[] = [
      { host: 'web-1', minutes: 0, cpu: 95 },
      { host: 'web-1', minutes: 1, cpu: 50 },
      { host: 'web-1', minutes: 2, cpu: 95 },
      { host: 'web-1', minutes: 3, cpu: 50 },
    ];
    for (const [offset, sample] of samples.entries()) {
      await h.evaluator.handleBatch(batch(offset, sample), ctx);
    }
    // The ok window keeps its flap data (stored), though the group's mark is at the same time.
    expect(JSON.parse(h.states.get('org_1/web-1/rul_flap')!)).toEqual({
      v: 2,
      status: 'ok',
      lastSampleMs: at(3),
      flap: { changesMs: [at(1), at(2), at(3)], flapping: true },
    });
    expect(h.alerts.map((a) => [a.firedMs, a.resolvedMs, a.flapping])).toEqual([
      [at(0), at(1), false],
      [at(2), at(3), true],
    ]);
    const restarted = h.newEvaluator();
    await restarted.handleBatch(batch(4, { host: 'web-1', minutes: 12.5, cpu: 50 }), ctx);
    expect(h.alerts.every((a) => a.settled === 0)).toBe(true);
    await restarted.handleBatch(batch(5, { host: 'web-1', minutes: 13, cpu: 50 }), ctx);
    expect(h.alerts.map((a) => [a.firedMs, a.flapping, a.settled])).toEqual([
      [at(0), false, 0],
      [at(2), false, 1],
    ]);
    // Settled and nothing left to remember: the row goes.
    await restarted.handleBatch(batch(6, { host: 'web-1', minutes: 14, cpu: 50 }), ctx);
    expect(h.states.has('org_1/web-1/rul_flap')).toBe(false);
  });

  it('tells the store which watched metrics each host sent, for the rules with no data on whose scope matches', async () => {
    const h = harness([
      buildLiveRule({ id: 'rul_plain' }),
      buildLiveRule({ id: 'rul_nd', noDataMinutes: 5 }),
      buildLiveRule({ id: 'rul_nd_prod', noDataMinutes: 5, scope: { env: 'prod' } }),
    ]);
    await h.evaluator.handleBatch(
      batch(
        0,
        { host: 'web-1', minutes: 1, cpu: 10, tags: { env: 'prod' } },
        { host: 'web-1', minutes: 2, cpu: 20, tags: { env: 'prod' } },
        { host: 'web-2', minutes: 1, cpu: 10, tags: { env: 'dev' } },
        { host: 'web-3', minutes: 1 },
      ),
      ctx,
    );
    expect(h.calls.commits[0]?.seen).toEqual([
      {
        orgId: 'org_1',
        host: 'web-1',
        metric: 'cpu_percent',
        tags: { env: 'prod' },
        sampleMs: at(2),
        ruleIds: ['rul_nd', 'rul_nd_prod'],
      },
      {
        orgId: 'org_1',
        host: 'web-2',
        metric: 'cpu_percent',
        tags: { env: 'dev' },
        sampleMs: at(1),
        ruleIds: ['rul_nd'],
      },
    ]);
    // The evaluator's clock, not the samples' time.
    expect(h.calls.commits[0]?.seenAtMs).toBe(0);
    // Written again only once the refresh period passed on the evaluator's clock.
    await h.evaluator.handleBatch(batch(4, { host: 'web-2', minutes: 3, cpu: 10 }), ctx);
    expect(h.calls.commits[1]?.seen).toBeUndefined();
    h.setClock(15_000);
    await h.evaluator.handleBatch(batch(5, { host: 'web-2', minutes: 4, cpu: 10 }), ctx);
    expect(h.calls.commits[2]).toMatchObject({
      seen: [{ host: 'web-2', sampleMs: at(4) }],
      seenAtMs: 15_000,
    });
    const quiet = harness([buildLiveRule({ id: 'rul_plain' })]);
    await quiet.evaluator.handleBatch(batch(0, { host: 'web-1', minutes: 1, cpu: 10 }), ctx);
    expect(quiet.calls.commits[0]?.seen).toBeUndefined();
  });
});
