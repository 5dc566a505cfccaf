import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LiveRule } from '@monitor/db';
import type { RuleSetChange } from './rule-poller.js';
import { createRulePoller } from './rule-poller.js';
import { buildLiveRule } from './testing/live-rule.js';

function rule(id: string, orgId = 'org_1', metric = 'cpu_percent'): LiveRule {
  return buildLiveRule({ id, orgId, name: id, metric, severity: 'warning' });
}

/** A fake rules table: a fingerprint that changes with every edit, and a load counter. */
function fakeRules(initial: LiveRule[]) {
  let rules = initial;
  let revision = 1;
  const counts = { fingerprints: 0, loads: 0 };
  let failing: Error | undefined;
  return {
    counts,
    set(next: LiveRule[]) {
      rules = next;
      revision++;
    },
    fail(err: Error | undefined) {
      failing = err;
    },
    fingerprint() {
      counts.fingerprints++;
      return failing === undefined ? Promise.resolve(`${revision}`) : Promise.reject(failing);
    },
    load() {
      counts.loads++;
      return Promise.resolve({ rules: [...rules], epoch: 0 });
    },
  };
}

describe('createRulePoller', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  function poller(table: ReturnType<typeof fakeRules>) {
    const errors: unknown[] = [];
    const changes: RuleSetChange[] = [];
    const p = createRulePoller({
      fingerprint: () => table.fingerprint(),
      load: () => table.load(),
      intervalMs: 1000,
      onError: (err) => errors.push(err),
      onChange: (change) => changes.push(change),
    });
    return { poller: p, errors, changes };
  }

  it('loads the rules at start and indexes them by organization and metric', async () => {
    const table = fakeRules([rule('rul_a'), rule('rul_b', 'org_2'), rule('rul_c', 'org_1', 'mem')]);
    const { poller: p } = poller(table);
    expect(p.current().ruleIds.size).toBe(0);
    await p.start();
    expect(
      p
        .current()
        .rulesFor('org_1', 'cpu_percent')
        .map((r) => r.id),
    ).toEqual(['rul_a']);
    expect(
      p
        .current()
        .rulesFor('org_2', 'cpu_percent')
        .map((r) => r.id),
    ).toEqual(['rul_b']);
    expect(
      p
        .current()
        .rulesFor('org_1', 'mem')
        .map((r) => r.id),
    ).toEqual(['rul_c']);
    expect(p.current().rulesFor('org_3', 'cpu_percent')).toEqual([]);
    expect([...(p.current().groupsByMetric('org_1')?.keys() ?? [])].sort()).toEqual([
      'cpu_percent',
      'mem',
    ]);
    expect(p.current().groupsByMetric('org_3')).toBeUndefined();
    await p.stop();
  });

  it('checks the fingerprint every interval and reloads only when it changed', async () => {
    const table = fakeRules([rule('rul_a'), rule('rul_b')]);
    const { poller: p, changes } = poller(table);
    await p.start();
    await vi.advanceTimersByTimeAsync(3000);
    expect(table.counts).toEqual({ fingerprints: 4, loads: 1 });

    const before = p.current();
    table.set([rule('rul_b'), rule('rul_d')]);
    await vi.advanceTimersByTimeAsync(1000);
    expect(table.counts.loads).toBe(2);
    expect(p.current()).not.toBe(before);
    expect([...p.current().ruleIds]).toEqual(['rul_b', 'rul_d']);
    expect(changes.map((c) => c.removedRuleIds)).toEqual([[], ['rul_a']]);
    await p.stop();
  });

  it('reports a rule whose evaluation restarted (a new generation) as removed', async () => {
    const table = fakeRules([rule('rul_a'), rule('rul_b')]);
    const { poller: p, changes } = poller(table);
    await p.start();
    // Disabled and enabled again between two polls: the same rule, a new generation.
    table.set([{ ...rule('rul_a'), generation: 7 }, rule('rul_b')]);
    await vi.advanceTimersByTimeAsync(1000);
    expect([...p.current().ruleIds]).toEqual(['rul_a', 'rul_b']);
    expect(p.current().generationOf('rul_a')).toBe(7);
    expect(changes.map((c) => c.removedRuleIds)).toEqual([[], ['rul_a']]);
    await p.stop();
  });

  it('keeps the current rules through a failed check and picks the change up once it works', async () => {
    const table = fakeRules([rule('rul_a')]);
    const { poller: p, errors } = poller(table);
    await p.start();
    table.fail(new Error('connection refused'));
    table.set([]);
    await vi.advanceTimersByTimeAsync(2000);
    expect(errors).toHaveLength(2);
    expect(p.current().has('rul_a')).toBe(true);
    table.fail(undefined);
    await vi.advanceTimersByTimeAsync(1000);
    expect(p.current().has('rul_a')).toBe(false);
    await p.stop();
  });

  it('rejects start when the first load fails', async () => {
    const table = fakeRules([]);
    table.fail(new Error('no database'));
    const { poller: p } = poller(table);
    await expect(p.start()).rejects.toThrow('no database');
  });

  it('stops checking once stopped', async () => {
    const table = fakeRules([]);
    const { poller: p } = poller(table);
    await p.start();
    await p.stop();
    await vi.advanceTimersByTimeAsync(5000);
    expect(table.counts.fingerprints).toBe(1);
  });

  it('refreshes with a check that starts after the call, never one already running', async () => {
    const table = fakeRules([rule('rul_a')]);
    const { poller: p } = poller(table);
    await p.start();
    // The interval's check is in flight (it read the fingerprint) when the rule is committed.
    await vi.advanceTimersByTimeAsync(1000);
    const running = p.poll();
    table.set([rule('rul_a'), rule('rul_b')]);
    await p.refresh();
    await running;
    expect(p.current().has('rul_b')).toBe(true);
    expect(table.counts.fingerprints).toBe(4); // start, interval, the running one, refresh's own

    await p.stop();
  });

  it('shares the next check among the callers that came while one was running', async () => {
    const table = fakeRules([rule('rul_a')]);
    const { poller: p } = poller(table);
    await p.start();
    await Promise.all([p.refresh(), p.refresh(), p.refresh(), p.refresh()]);
    expect(table.counts.fingerprints).toBe(3); // start, the first caller's, the others' one
    await p.stop();
  });

  it('rejects refresh when the rules cannot be read', async () => {
    const table = fakeRules([rule('rul_a')]);
    const { poller: p } = poller(table);
    await p.start();
    table.fail(new Error('connection refused'));
    await expect(p.refresh()).rejects.toThrow('connection refused');
    await p.stop();
  });
});
