import { describe, expect, it } from 'vitest';
import type { AlertmanagerResendStore, RuleAlertResend } from '@monitor/db';
import { createLogger } from '@monitor/platform';
import type { Alert } from '@monitor/schemas';
import type { AlertmanagerAlert } from './alertmanager-alert.js';
import type { AlertmanagerSender } from './alertmanager-sender.js';
import { createRuleAlertResender } from './rule-alert-resender.js';
import { firedRuleFileAlert, ruleFileAlert as stored } from './testing/fired-warning.js';

const logger = createLogger({ level: 'silent', name: 'test' });
const nowMs = () => Date.parse('2026-11-22T10:30:00.000Z');
const { alert: wire } = firedRuleFileAlert;

function fakeStore(
  batches: RuleAlertResend[][],
): Pick<AlertmanagerResendStore, 'takeRuleAlertResends'> {
  return { takeRuleAlertResends: () => Promise.resolve(batches.shift() ?? []) };
}

function fakeSender() {
  const posts: { urls: readonly string[]; alerts: readonly AlertmanagerAlert[] }[] = [];
  const sender: Pick<AlertmanagerSender, 'post'> = {
    post(alerts, target) {
      posts.push({ urls: target.urls, alerts });
      return Promise.resolve({ delivered: true, detail: 'HTTP 200' });
    },
  };
  return { sender, posts };
}

describe('createRuleAlertResender', () => {
  it('posts the re-sends taken, per organization, each in its latest state', async () => {
    const target = { urls: ['http://am.example:9093'], timeout_seconds: 10 };
    const resolved: Alert = {
      ...stored,
      id: 'alr_2',
      status: 'resolved',
      resolvedAt: new Date('2026-11-22T10:29:00.000Z'),
    };
    const store = fakeStore([
      [
        { orgId: 'org_a', alert: stored, target, validUntil: new Date('2026-11-22T10:45:00.000Z') },
        { orgId: 'org_a', alert: resolved, target, validUntil: null },
        { orgId: 'org_b', alert: stored, target: { urls: 'not a list' }, validUntil: null },
      ],
    ]);
    const fake = fakeSender();
    const resender = createRuleAlertResender(
      { store, sender: fake.sender, logger, nowMs },
      { pollIntervalMs: 500, resendIntervalMs: 60_000, batchSize: 100 },
    );
    expect(await resender.runOnce()).toEqual({ alerts: 3, posts: 2, failedPosts: 1 });
    expect(fake.posts).toHaveLength(1);
    expect(fake.posts[0]!.alerts).toEqual([
      {
        labels: wire.labels,
        annotations: wire.annotations,
        startsAt: wire.fired_at,
        endsAt: '2026-11-22T10:45:00.000Z',
      },
      {
        labels: wire.labels,
        annotations: wire.annotations,
        startsAt: wire.fired_at,
        endsAt: '2026-11-22T10:29:00.000Z',
      },
    ]);
    expect(await resender.runOnce()).toEqual({ alerts: 0, posts: 0, failedPosts: 0 });
  });
});
