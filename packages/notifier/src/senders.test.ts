import { describe, expect, it } from 'vitest';
import type { MailMessage, MailTransport } from './email-sender.js';
import { createEmailSender } from './email-sender.js';
import type { HttpPostTransport } from './http-post-transport.js';
import { TargetRefusedError } from './http-post-transport.js';
import type { OutgoingNotification } from './notification-sender.js';
import { createSlackSender } from './slack-sender.js';
import { createWebhookSender } from './webhook-sender.js';
import { verifyWebhookSignature } from './webhook-signature.js';
import { firedWarning } from './testing/fired-warning.js';

const payload = firedWarning;
const notification: OutgoingNotification = {
  idempotencyKey: `${payload.alert.id}:fired`,
  payload,
};

type Request = { url: string; headers: Headers; body: Buffer };

/** A transport that records each request and answers with `respond`. */
function fakeTransport(respond: (request: Request, signal: AbortSignal) => Promise<number>) {
  const requests: Request[] = [];
  const transport: HttpPostTransport = async ({ url, headers, body, signal }) => {
    const request = { url: url.href, headers: new Headers(headers), body: Buffer.from(body) };
    requests.push(request);
    return { status: await respond(request, signal) };
  };
  return { transport, requests };
}

const answer = (status: number) => Promise.resolve(status);

describe('createSlackSender', () => {
  it('posts the readable text as JSON with the idempotency key', async () => {
    const fake = fakeTransport(() => answer(200));
    const sender = createSlackSender({ timeoutMs: 1_000, transport: fake.transport });
    const result = await sender.send(notification, { webhook_url: 'https://hooks.example/T/B/x' });
    expect(result).toEqual({ delivered: true, detail: 'HTTP 200' });
    const [request] = fake.requests;
    expect(request!.url).toBe('https://hooks.example/T/B/x');
    expect(request!.headers.get('content-type')).toBe('application/json');
    expect(request!.headers.get('idempotency-key')).toBe(notification.idempotencyKey);
    const body = JSON.parse(request!.body.toString()) as { text: string };
    expect(body.text).toMatch(/^\*\[FIRING\] warning: cpu high on web-1\*\n/);
    expect(body.text).toContain('cpu_percent is 95 (alert when &gt; 90).');
  });

  it('fails the attempt on a non-2xx answer, naming its status', async () => {
    const fake = fakeTransport(() => answer(404));
    const sender = createSlackSender({ timeoutMs: 1_000, transport: fake.transport });
    expect(await sender.send(notification, { webhook_url: 'https://hooks.example/x' })).toEqual({
      delivered: false,
      detail: 'HTTP 404',
    });
  });

  it('treats a redirect as a failure rather than following it', async () => {
    const fake = fakeTransport(() => answer(302));
    const sender = createSlackSender({ timeoutMs: 1_000, transport: fake.transport });
    expect(await sender.send(notification, { webhook_url: 'https://hooks.example/x' })).toEqual({
      delivered: false,
      detail: 'HTTP 302',
    });
  });
});

describe('createWebhookSender', () => {
  const target = { url: 'https://receiver.example/hook', secret: 'whsec-0123456789abcdef' };
  const nowMs = 1_700_000_000_123;

  it('posts the payload signed over the exact body bytes and the timestamp', async () => {
    const fake = fakeTransport(() => answer(204));
    const sender = createWebhookSender({
      timeoutMs: 1_000,
      transport: fake.transport,
      nowMs: () => nowMs,
    });
    expect(await sender.send(notification, target)).toEqual({
      delivered: true,
      detail: 'HTTP 204',
    });
    const [request] = fake.requests;
    expect(JSON.parse(request!.body.toString())).toEqual(payload);
    expect(request!.headers.get('idempotency-key')).toBe(notification.idempotencyKey);
    expect(request!.headers.get('x-monitor-timestamp')).toBe('1700000000');
    const verify = (secret: string, body: Buffer) =>
      verifyWebhookSignature({
        secret,
        body,
        timestamp: request!.headers.get('x-monitor-timestamp') ?? undefined,
        signature: request!.headers.get('x-monitor-signature') ?? undefined,
        nowMs,
      });
    expect(verify(target.secret, request!.body)).toBe(true);
    expect(verify('another-secret-0123456789', request!.body)).toBe(false);
    expect(verify(target.secret, Buffer.from(JSON.stringify(payload, null, 1)))).toBe(false);
  });

  it('fails the attempt on a network error, naming it', async () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:9'), {
      code: 'ECONNREFUSED',
    });
    const fake = fakeTransport(() => Promise.reject(refused));
    const sender = createWebhookSender({ timeoutMs: 1_000, transport: fake.transport });
    expect(await sender.send(notification, target)).toEqual({
      delivered: false,
      detail: 'request failed: connect ECONNREFUSED 127.0.0.1:9',
    });
  });

  it('fails a refused target for good, naming why', async () => {
    const fake = fakeTransport(() =>
      Promise.reject(new TargetRefusedError('127.0.0.1 is a loopback address')),
    );
    const sender = createWebhookSender({ timeoutMs: 1_000, transport: fake.transport });
    expect(await sender.send(notification, target)).toEqual({
      delivered: false,
      detail: 'target refused: 127.0.0.1 is a loopback address',
      retriable: false,
    });
  });

  it('gives up on a receiver that does not answer within the timeout', async () => {
    const fake = fakeTransport(
      (_request, signal) =>
        new Promise((_resolve, reject) => {
          signal.addEventListener('abort', () => reject(signal.reason as Error));
        }),
    );
    const sender = createWebhookSender({ timeoutMs: 30, transport: fake.transport });
    expect(await sender.send(notification, target)).toEqual({
      delivered: false,
      detail: 'no answer within 30 ms',
    });
  });
});

describe('createEmailSender', () => {
  function fakeTransport(outcome: () => Promise<{ response: string; rejected: unknown[] }>) {
    const sent: MailMessage[] = [];
    const transport: MailTransport = {
      sendMail(message) {
        sent.push(message);
        return outcome();
      },
      close: () => undefined,
    };
    return { transport, sent };
  }
  const target = { to: ['ops@example.com', 'oncall@example.com'], from: 'monitor@example.com' };

  it('mails the readable message to every recipient with the idempotency key header', async () => {
    const fake = fakeTransport(() => Promise.resolve({ response: '250 OK: queued', rejected: [] }));
    const result = await createEmailSender(fake.transport).send(notification, target);
    expect(result).toEqual({ delivered: true, detail: '250 OK: queued' });
    expect(fake.sent).toEqual([
      {
        from: 'monitor@example.com',
        to: ['ops@example.com', 'oncall@example.com'],
        subject: '[FIRING] warning: cpu high on web-1',
        text: expect.stringContaining('cpu_percent is 95 (alert when > 90).'),
        headers: { 'Idempotency-Key': notification.idempotencyKey },
      },
    ]);
  });

  it('reports the SMTP reply of a refusal, or the error code without one', async () => {
    const refused = Object.assign(new Error('Message failed'), {
      response: '550 5.1.1 mailbox unavailable',
      responseCode: 550,
    });
    const failing = fakeTransport(() => Promise.reject(refused));
    expect(await createEmailSender(failing.transport).send(notification, target)).toEqual({
      delivered: false,
      detail: '550 5.1.1 mailbox unavailable',
    });
    const down = Object.assign(new Error('Connection timeout'), { code: 'ETIMEDOUT' });
    const unreachable = fakeTransport(() => Promise.reject(down));
    expect(await createEmailSender(unreachable.transport).send(notification, target)).toEqual({
      delivered: false,
      detail: 'SMTP failed: ETIMEDOUT Connection timeout',
    });
  });
});
