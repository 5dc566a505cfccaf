import { describe, expect, it } from 'vitest';
import type { AlertmanagerTarget } from '@monitor/schemas';
import type { AlertmanagerAlert } from './alertmanager-alert.js';
import { alertsUrl, createAlertmanagerSender, latestState } from './alertmanager-sender.js';
import type { HttpPostTransport } from './http-post-transport.js';
import { TargetRefusedError } from './http-post-transport.js';
import { firedWarning } from './testing/fired-warning.js';

const notification = { idempotencyKey: `${firedWarning.alert.id}:fired`, payload: firedWarning };

/** A transport answering per URL, recording each request. */
function fakeTransport(answer: (url: string) => number | Error) {
  const requests: { url: string; headers: Headers; body: unknown }[] = [];
  const transport: HttpPostTransport = ({ url, headers, body }) => {
    requests.push({
      url: url.href,
      headers: new Headers(headers),
      body: JSON.parse(Buffer.from(body).toString()) as unknown,
    });
    const outcome = answer(url.href);
    return outcome instanceof Error
      ? Promise.reject(outcome)
      : Promise.resolve({ status: outcome });
  };
  return { transport, requests };
}

const target = (urls: string[], extra: Partial<AlertmanagerTarget> = {}): AlertmanagerTarget => ({
  urls,
  timeout_seconds: 5,
  ...extra,
});

const nowMs = () => Date.parse('2026-11-22T10:30:00.000Z');

describe('createAlertmanagerSender', () => {
  it('posts the alert as a one-element array to /api/v2/alerts with basic auth', async () => {
    const fake = fakeTransport(() => 200);
    const sender = createAlertmanagerSender({
      transport: fake.transport,
      resendIntervalMs: 60_000,
      nowMs,
    });
    const result = await sender.send(
      notification,
      target(['http://am.example:9093'], { basic_auth: { username: 'u', password: 'p:w' } }),
    );
    expect(result).toEqual({ delivered: true, detail: 'HTTP 200' });
    const [request] = fake.requests;
    expect(request!.url).toBe('http://am.example:9093/api/v2/alerts');
    expect(request!.headers.get('authorization')).toBe(
      `Basic ${Buffer.from('u:p:w').toString('base64')}`,
    );
    expect(request!.headers.get('idempotency-key')).toBe(notification.idempotencyKey);
    const body = request!.body as AlertmanagerAlert[];
    expect(body).toHaveLength(1);
    expect(body[0]!.labels['alertname']).toBe('cpu high');
    // Four re-send intervals ahead of the POST.
    expect(body[0]!.endsAt).toBe('2026-11-22T10:34:00.000Z');
  });

  it('is delivered once one Alertmanager accepted it, and lists every answer', async () => {
    const fake = fakeTransport((url) => (url.startsWith('http://a.') ? 200 : 503));
    const sender = createAlertmanagerSender({ transport: fake.transport, resendIntervalMs: 1 });
    const result = await sender.send(
      notification,
      target(['http://a.example', 'http://b.example']),
    );
    expect(fake.requests.map((request) => request.url).sort()).toEqual([
      'http://a.example/api/v2/alerts',
      'http://b.example/api/v2/alerts',
    ]);
    expect(result).toEqual({
      delivered: true,
      detail: 'http://a.example: HTTP 200; http://b.example: HTTP 503',
    });
  });

  it('retries when none accepted, and gives up only when every target is refused', async () => {
    const down = fakeTransport(() => 503);
    const sender = createAlertmanagerSender({ transport: down.transport, resendIntervalMs: 1 });
    expect(await sender.send(notification, target(['http://a.example']))).toEqual({
      delivered: false,
      detail: 'HTTP 503',
      retriable: true,
    });
    const refused = fakeTransport(() => new TargetRefusedError('a loopback address'));
    const guarded = createAlertmanagerSender({ transport: refused.transport, resendIntervalMs: 1 });
    expect(await guarded.send(notification, target(['http://127.0.0.1:9093']))).toEqual({
      delivered: false,
      detail: 'target refused: a loopback address',
      retriable: false,
    });
  });
});

describe('latestState', () => {
  it('sends a firing message retried after the alert resolved as resolved', () => {
    const resolvedAt = new Date('2026-11-22T10:28:00.000Z');
    expect(latestState({ ...notification, alertResolvedAt: resolvedAt }).alert).toMatchObject({
      status: 'resolved',
      resolved_at: '2026-11-22T10:28:00.000Z',
      fired_at: firedWarning.alert.fired_at,
    });
    expect(latestState({ ...notification, alertResolvedAt: null })).toBe(firedWarning);
    expect(latestState(notification)).toBe(firedWarning);
  });
});

describe('alertsUrl', () => {
  it('keeps a path prefix and drops trailing slashes', () => {
    expect(alertsUrl('http://proxy.example/alertmanager/')).toBe(
      'http://proxy.example/alertmanager/api/v2/alerts',
    );
  });
});
