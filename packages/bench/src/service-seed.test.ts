import { describe, expect, it } from 'vitest';
import { idPattern } from '@monitor/schemas';
import { countPlanned, planServices, ulidLike } from './service-seed.js';

const nowMs = Date.UTC(2026, 10, 22, 12);
const staleAfterMs = 3_600_000;
const options = {
  count: 10_000,
  seed: 7,
  nowMs,
  staleAfterMs,
  staleShare: 0.1,
  activeAlertShare: 0.02,
};

describe('planServices', () => {
  it('plans the same services for the same seed and others for another', () => {
    const small = { ...options, count: 50 };
    expect(planServices(small)).toEqual(planServices(small));
    expect(planServices({ ...small, seed: 8 })[0]?.id).not.toBe(planServices(small)[0]?.id);
  });

  it('gives unique names and ids the API accepts', () => {
    const plan = planServices(options);
    expect(new Set(plan.map((s) => s.name)).size).toBe(plan.length);
    expect(new Set(plan.map((s) => s.id)).size).toBe(plan.length);
    expect(plan.every((s) => idPattern('svc').test(s.id))).toBe(true);
  });

  it('makes the requested shares stale and alerting, within sampling noise', () => {
    const plan = planServices(options);
    const stale = plan.filter((s) => s.lastSeenMs <= nowMs - staleAfterMs).length;
    const alerting = plan.filter((s) => s.activeAlert !== undefined).length;
    expect(stale).toBeGreaterThan(850);
    expect(stale).toBeLessThan(1_150);
    expect(alerting).toBeGreaterThan(150);
    expect(alerting).toBeLessThan(250);
    expect(plan.every((s) => s.lastSeenMs <= nowMs)).toBe(true);
  });

  it('derives each status by the contract: an active alert outranks staleness', () => {
    for (const s of planServices(options)) {
      const stale = s.lastSeenMs <= nowMs - staleAfterMs;
      expect(s.status).toBe(s.activeAlert ?? (stale ? 'stale' : 'healthy'));
    }
  });

  it('counts every service once per status and once per environment', () => {
    const counts = countPlanned(planServices(options));
    const sum = (values: Record<string, number>) =>
      Object.values(values).reduce((total, n) => total + n, 0);
    expect(counts.total).toBe(10_000);
    expect(sum(counts.byStatus)).toBe(10_000);
    expect(sum(counts.byEnvironment)).toBe(10_000);
    expect(Object.keys(counts.byEnvironment).sort()).toEqual(['dev', 'prod', 'staging']);
    expect(counts.byEnvironment['prod']).toBeGreaterThan(4_500);
  });
});

describe('ulidLike', () => {
  it('encodes the time in the first ten characters, so ids sort by time', () => {
    const zero = () => 0;
    const earlier = ulidLike('alr', nowMs, zero);
    const later = ulidLike('alr', nowMs + 1, zero);
    expect(earlier < later).toBe(true);
    expect(idPattern('alr').test(earlier)).toBe(true);
    expect(ulidLike('rul', 0, zero)).toBe(`rul_${'0'.repeat(26)}`);
  });
});
