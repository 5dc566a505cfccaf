import { describe, expect, it } from 'vitest';
import type {
  ClaimedNotification,
  ClaimNotificationsOptions,
  RecordAttemptInput,
} from '@monitor/db';
import { createLogger } from '@monitor/platform';
import type { NotificationChannelType } from '@monitor/schemas';
import type {
  DeliveryResult,
  NotificationSender,
  NotificationSenders,
  OutgoingNotification,
} from './notification-sender.js';
import type { NotifierOptions, NotifierStore } from './notifier.js';
import { createNotifier } from './notifier.js';
import { firedWarning } from './testing/fired-warning.js';

const payload = firedWarning;

const targets: Record<NotificationChannelType, Record<string, unknown>> = {
  slack: { webhook_url: 'https://hooks.example/x' },
  email: { to: ['ops@example.com'], from: 'monitor@example.com' },
  webhook: { url: 'https://receiver.example/hook', secret: 'whsec-0123456789abcdef' },
  alertmanager: { urls: ['https://alertmanager.example:9093'], timeout_seconds: 10 },
};

let sequence = 0;
function claim(overrides: Partial<ClaimedNotification> = {}): ClaimedNotification {
  const channel = overrides.channel ?? 'webhook';
  sequence += 1;
  return {
    id: `ntf_${sequence}`,
    orgId: 'org_a',
    alertId: payload.alert.id,
    transition: 'fired',
    channel,
    idempotencyKey: `${payload.alert.id}:fired`,
    payload,
    attempt: 1,
    leaseUntil: new Date('2026-11-22T10:26:00.000Z'),
    target: targets[channel],
    messageTemplate: null,
    tags: {},
    alertResolvedAt: null,
    alertValidUntil: null,
    ...overrides,
  };
}

/** An outbox whose due rows are handed out once, recording what the notifier reports. */
function fakeStore(rows: ClaimedNotification[], recordResult = true) {
  const due = [...rows];
  const claims: ClaimNotificationsOptions[] = [];
  const records: RecordAttemptInput[] = [];
  const store: NotifierStore = {
    claimDue(options) {
      claims.push(options);
      return Promise.resolve(due.splice(0, options.limit));
    },
    recordAttempt(input) {
      records.push(input);
      return Promise.resolve(recordResult);
    },
  };
  return { store, claims, records };
}

/** Senders answering `result` (per channel), recording what they were given. */
function fakeSenders(result: (channel: NotificationChannelType) => Promise<DeliveryResult>) {
  const sent: {
    channel: NotificationChannelType;
    notification: OutgoingNotification;
    target: unknown;
  }[] = [];
  const sender = <T>(channel: NotificationChannelType): NotificationSender<T> => ({
    send(notification, target) {
      sent.push({ channel, notification, target });
      return result(channel);
    },
  });
  const senders: NotificationSenders = {
    slack: sender('slack'),
    email: sender('email'),
    webhook: sender('webhook'),
    alertmanager: sender('alertmanager'),
  };
  return { senders, sent };
}

function fakeMetrics() {
  const events: string[] = [];
  return {
    events,
    metrics: {
      sent: (channel: NotificationChannelType) => events.push(`sent ${channel}`),
      failed: (channel: NotificationChannelType, final: boolean) =>
        events.push(`failed ${channel}${final ? ' final' : ''}`),
    },
  };
}

const options: NotifierOptions = {
  pollIntervalMs: 10,
  batchSize: 5,
  leaseMs: 30_000,
  retry: { baseDelayMs: 1_000, maxDelayMs: 60_000, maxAttempts: 4, jitterRatio: 0.5 },
};
const logger = createLogger({ level: 'silent', name: 'test' });

/** A clock that advances 7 ms per reading, so durations are known. */
function steppingClock(startMs = Date.parse('2026-11-22T10:25:30.000Z')) {
  let now = startMs - 7;
  return () => (now += 7);
}

describe('createNotifier', () => {
  it('sends each claimed message through its channel and records the delivery', async () => {
    const rows = [claim({ channel: 'slack' }), claim({ channel: 'email' }), claim()];
    const fake = fakeStore(rows);
    const senders = fakeSenders(() => Promise.resolve({ delivered: true, detail: 'HTTP 200' }));
    const metrics = fakeMetrics();
    const notifier = createNotifier(
      {
        store: fake.store,
        senders: senders.senders,
        logger,
        metrics: metrics.metrics,
        nowMs: steppingClock(),
      },
      options,
    );
    expect(await notifier.runOnce()).toEqual({
      claimed: 3,
      delivered: 3,
      retrying: 0,
      failed: 0,
      unrecorded: 0,
      suppressed: 0,
      followUps: 0,
    });
    expect(fake.claims).toEqual([
      {
        limit: 5,
        leaseMs: 30_000,
        maxAttempts: 4,
        onAbandonedFailed: expect.any(Function),
        now: expect.any(Date),
        onSuppressed: expect.any(Function),
      },
    ]);
    expect(senders.sent.map((s) => [s.channel, s.target])).toEqual([
      ['slack', targets.slack],
      ['email', targets.email],
      ['webhook', targets.webhook],
    ]);
    expect(senders.sent[0]!.notification).toEqual({
      idempotencyKey: `${payload.alert.id}:fired`,
      payload,
      messageTemplate: null,
      tags: {},
      alertResolvedAt: null,
      alertValidUntil: null,
    });
    expect(fake.records[0]).toEqual({
      notification: rows[0],
      attemptedAt: expect.any(Date),
      durationMs: expect.any(Number),
      detail: 'HTTP 200',
      outcome: 'delivered',
    });
    expect(metrics.events.sort()).toEqual(['sent email', 'sent slack', 'sent webhook']);
  });

  it('schedules a failed attempt again after the backoff of its attempt number', async () => {
    const fake = fakeStore([claim({ attempt: 1 }), claim({ attempt: 3 })]);
    const senders = fakeSenders(() => Promise.resolve({ delivered: false, detail: 'HTTP 500' }));
    const metrics = fakeMetrics();
    const notifier = createNotifier(
      {
        store: fake.store,
        senders: senders.senders,
        logger,
        metrics: metrics.metrics,
        nowMs: steppingClock(),
        random: () => 0.5,
      },
      options,
    );
    const round = await notifier.runOnce();
    expect(round).toMatchObject({ claimed: 2, retrying: 2, failed: 0 });
    // base 1 s · 2^(attempt − 1), less half the 50 % jitter.
    expect(fake.records.map((r) => r.outcome === 'failed' && r.retryInMs)).toEqual([750, 3_000]);
    expect(fake.records[0]).toMatchObject({ detail: 'HTTP 500' });
    expect(metrics.events).toEqual(['failed webhook', 'failed webhook']);
  });

  it('fails a message for good when its last attempt fails', async () => {
    const fake = fakeStore([claim({ attempt: 4 })]);
    const senders = fakeSenders(() => Promise.resolve({ delivered: false, detail: 'HTTP 503' }));
    const metrics = fakeMetrics();
    const notifier = createNotifier(
      {
        store: fake.store,
        senders: senders.senders,
        logger,
        metrics: metrics.metrics,
        nowMs: steppingClock(Date.parse('2026-11-22T10:25:30.000Z')),
      },
      options,
    );
    expect(await notifier.runOnce()).toMatchObject({ failed: 1, retrying: 0 });
    expect(fake.records[0]).toMatchObject({
      outcome: 'failed',
      retryInMs: undefined,
      // The round's own reading (silences, renotify) came first.
      attemptedAt: new Date('2026-11-22T10:25:30.007Z'),
      durationMs: 7,
    });
    expect(metrics.events).toEqual(['failed webhook final']);
  });

  it('fails a channel without a target at once, with that reason, sending nothing', async () => {
    const fake = fakeStore([claim({ channel: 'email', target: undefined })]);
    const senders = fakeSenders(() => Promise.resolve({ delivered: true, detail: '250 OK' }));
    const notifier = createNotifier(
      { store: fake.store, senders: senders.senders, logger },
      options,
    );
    expect(await notifier.runOnce()).toMatchObject({ failed: 1 });
    expect(senders.sent).toEqual([]);
    expect(fake.records[0]).toMatchObject({
      outcome: 'failed',
      retryInMs: undefined,
      detail: 'no email target is configured for the organization',
    });
  });

  it('fails a stored target that no longer validates at once', async () => {
    const fake = fakeStore([claim({ channel: 'slack', target: { webhook_url: 'ftp://x' } })]);
    const senders = fakeSenders(() => Promise.resolve({ delivered: true, detail: 'HTTP 200' }));
    const notifier = createNotifier(
      { store: fake.store, senders: senders.senders, logger },
      options,
    );
    await notifier.runOnce();
    expect(senders.sent).toEqual([]);
    expect(fake.records[0]).toMatchObject({
      outcome: 'failed',
      retryInMs: undefined,
      detail: 'the stored slack target is invalid',
    });
  });

  it('fails a message for good at once when its sender says retrying cannot help', async () => {
    const fake = fakeStore([claim({ attempt: 1 })]);
    const detail = 'target refused: 127.0.0.1 is a loopback address';
    const senders = fakeSenders(() =>
      Promise.resolve({ delivered: false, detail, retriable: false }),
    );
    const metrics = fakeMetrics();
    const notifier = createNotifier(
      { store: fake.store, senders: senders.senders, logger, metrics: metrics.metrics },
      options,
    );
    expect(await notifier.runOnce()).toMatchObject({ failed: 1, retrying: 0 });
    expect(fake.records[0]).toMatchObject({ outcome: 'failed', retryInMs: undefined, detail });
    expect(metrics.events).toEqual(['failed webhook final']);
  });

  it('counts a sender that throws as a failed attempt to retry', async () => {
    const fake = fakeStore([claim()]);
    const senders = fakeSenders(() => Promise.reject(new Error('boom')));
    const notifier = createNotifier(
      { store: fake.store, senders: senders.senders, logger },
      options,
    );
    expect(await notifier.runOnce()).toMatchObject({ retrying: 1 });
    expect(fake.records[0]).toMatchObject({ outcome: 'failed', detail: 'sender error: boom' });
  });

  it('reports outcomes the store refused (a lost lease) as unrecorded', async () => {
    const fake = fakeStore([claim()], false);
    const senders = fakeSenders(() => Promise.resolve({ delivered: true, detail: 'HTTP 200' }));
    const notifier = createNotifier(
      { store: fake.store, senders: senders.senders, logger },
      options,
    );
    expect(await notifier.runOnce()).toMatchObject({ delivered: 0, unrecorded: 1 });
  });

  it('polls until stopped, and stop waits for the deliveries in flight', async () => {
    const fake = fakeStore([claim(), claim()]);
    let release: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => {
      release = resolve;
    });
    const senders = fakeSenders(async () => {
      await gate;
      return { delivered: true, detail: 'HTTP 200' };
    });
    const notifier = createNotifier(
      { store: fake.store, senders: senders.senders, logger },
      options,
    );
    notifier.start();
    notifier.start();
    while (senders.sent.length < 2) await new Promise((resolve) => setTimeout(resolve, 1));
    let stopped = false;
    const stopping = notifier.stop().then(() => {
      stopped = true;
    });
    await new Promise((resolve) => setTimeout(resolve, 30));
    expect(stopped).toBe(false);
    expect(fake.records).toHaveLength(0);
    release();
    await stopping;
    expect(fake.records.map((r) => r.outcome)).toEqual(['delivered', 'delivered']);
    // One loop only, despite the second start.
    expect(fake.claims).toHaveLength(1);
  });

  it('counts a message the claim failed for good (its notifier died every time) as a final failure', async () => {
    const store: NotifierStore = {
      claimDue(claimOptions) {
        claimOptions.onAbandonedFailed?.([{ id: 'ntf_1', alertId: 'alr_1', channel: 'webhook' }]);
        return Promise.resolve([]);
      },
      recordAttempt: () => Promise.resolve(true),
    };
    const failures: [NotificationChannelType, boolean][] = [];
    const metrics = {
      sent: () => undefined,
      failed: (channel: NotificationChannelType, final: boolean) => failures.push([channel, final]),
    };
    const senders = fakeSenders(() => Promise.resolve({ delivered: true, detail: 'HTTP 200' }));
    const notifier = createNotifier({ store, senders: senders.senders, logger, metrics }, options);
    await notifier.runOnce();
    expect(failures).toEqual([['webhook', true]]);
  });

  it('keeps polling after a round fails (the database was unreachable)', async () => {
    let calls = 0;
    const store: NotifierStore = {
      claimDue() {
        calls += 1;
        return calls === 1 ? Promise.reject(new Error('ECONNREFUSED')) : Promise.resolve([]);
      },
      recordAttempt: () => Promise.resolve(true),
    };
    const senders = fakeSenders(() => Promise.resolve({ delivered: true, detail: 'HTTP 200' }));
    const notifier = createNotifier({ store, senders: senders.senders, logger }, options);
    notifier.start();
    while (calls < 3) await new Promise((resolve) => setTimeout(resolve, 5));
    await notifier.stop();
    expect(calls).toBeGreaterThanOrEqual(3);
  });
});
