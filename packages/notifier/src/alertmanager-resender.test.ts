import { describe, expect, it } from 'vitest';
import type { AlertmanagerResend, AlertmanagerResendStore } from '@monitor/db';
import { createLogger } from '@monitor/platform';
import { buildAlert } from '@monitor/testkit/builders';
import type { AlertmanagerAlert } from './alertmanager-alert.js';
import type { AlertmanagerSender } from './alertmanager-sender.js';
import { createAlertmanagerResender } from './alertmanager-resender.js';

const logger = createLogger({ level: 'silent', name: 'resender-test' });
const nowMs = () => Date.parse('2026-11-22T10:30:00.000Z');

const resend = (
  orgId: string,
  id: string,
  target: Record<string, unknown>,
): AlertmanagerResend => ({
  orgId,
  alert: buildAlert({ id, host: `web-${id}` }),
  target,
  messageTemplate: null,
  tags: { team: 'web' },
});

/** A store paging through `rows` in (org, alert id) order, as the real one does. */
function fakeStore(
  rows: AlertmanagerResend[],
): Pick<AlertmanagerResendStore, 'listResends'> & { pages: number } {
  const store = {
    pages: 0,
    listResends(_now: Date, page: { limit: number; after?: { orgId: string; alertId: string } }) {
      store.pages += 1;
      const after = page.after;
      const rest =
        after === undefined
          ? rows
          : rows.filter(
              (row) =>
                row.orgId > after.orgId ||
                (row.orgId === after.orgId && row.alert.id > after.alertId),
            );
      return Promise.resolve(rest.slice(0, page.limit));
    },
  };
  return store;
}

function fakeSender(delivered: (urls: readonly string[]) => boolean) {
  const posts: { urls: readonly string[]; alerts: readonly AlertmanagerAlert[] }[] = [];
  const sender: Pick<AlertmanagerSender, 'post'> = {
    post(alerts, target) {
      posts.push({ urls: target.urls, alerts });
      return Promise.resolve({ delivered: delivered(target.urls), detail: 'HTTP 200' });
    },
  };
  return { sender, posts };
}

describe('createAlertmanagerResender', () => {
  it('posts every active alert to its organization’s Alertmanagers, page by page', async () => {
    const a = { urls: ['http://am-a.example:9093'] };
    const b = { urls: ['http://am-b.example:9093'] };
    const store = fakeStore([
      resend('org_a', 'alr_1', a),
      resend('org_a', 'alr_2', a),
      resend('org_a', 'alr_3', a),
      resend('org_b', 'alr_4', b),
    ]);
    const fake = fakeSender(() => true);
    const resender = createAlertmanagerResender(
      { store, sender: fake.sender, logger, nowMs },
      { resendIntervalMs: 60_000, pageSize: 2 },
    );
    expect(await resender.runOnce()).toEqual({ alerts: 4, posts: 3, failedPosts: 0 });
    expect(store.pages).toBe(3);
    const byUrl = (url: string) =>
      fake.posts
        .filter((post) => post.urls[0] === url)
        .flatMap((post) => post.alerts.map((posted) => posted.annotations['alert_id']));
    expect(byUrl('http://am-a.example:9093')).toEqual(['alr_1', 'alr_2', 'alr_3']);
    expect(byUrl('http://am-b.example:9093')).toEqual(['alr_4']);
    const [first] = fake.posts[0]!.alerts;
    // Valid for 4 re-send intervals from now; the service's tags are labels.
    expect(first!.endsAt).toBe('2026-11-22T10:34:00.000Z');
    expect(first!.labels['team']).toBe('web');
  });

  it('counts failed posts and skips an organization whose stored target is invalid', async () => {
    const store = fakeStore([
      resend('org_a', 'alr_1', { urls: ['http://down.example:9093'] }),
      resend('org_b', 'alr_2', { urls: 'not a list' }),
    ]);
    const fake = fakeSender(() => false);
    const resender = createAlertmanagerResender(
      { store, sender: fake.sender, logger, nowMs },
      { resendIntervalMs: 60_000, pageSize: 10 },
    );
    expect(await resender.runOnce()).toEqual({ alerts: 2, posts: 2, failedPosts: 2 });
    expect(fake.posts.map((post) => post.urls)).toEqual([['http://down.example:9093']]);
  });
});
