import type { HttpPostTransport } from './http-post-transport.js';
import { TargetRefusedError } from './http-post-transport.js';
import type { DeliveryResult } from './notification-sender.js';

/** What the Slack and webhook senders are built with. */
export type HttpSenderOptions = {
  /** Bounds each POST. */
  timeoutMs: number;
  /** `createHttpPostTransport` with the service's address policy, or a fake in unit tests. */
  transport: HttpPostTransport;
};

export type HttpPostOptions = {
  url: string;
  body: Uint8Array;
  headers: Readonly<Record<string, string>>;
  /** Bounds the exchange up to the answer's status. */
  timeoutMs: number;
  transport: HttpPostTransport;
};

/**
 * POSTs the body and reports the attempt: delivered on a 2xx answer; any other status (3xx
 * redirects are not followed), a network error or the timeout is a failed attempt, and a
 * refused target one that is not retried. The detail is the status alone: the answer's body
 * is never shown, since whoever set the target reads the attempt log, and a body is how a
 * request that reached an internal service would leak what it answered.
 */
export async function httpPost(options: HttpPostOptions): Promise<DeliveryResult> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  try {
    const { status } = await options.transport({
      url: new URL(options.url),
      headers: { 'User-Agent': 'monitor-notifier', ...options.headers },
      body: options.body,
      signal,
    });
    return { delivered: status >= 200 && status < 300, detail: `HTTP ${status}` };
  } catch (err) {
    if (err instanceof TargetRefusedError) {
      return { delivered: false, detail: `target refused: ${err.message}`, retriable: false };
    }
    return { delivered: false, detail: describeFailure(err, signal, options.timeoutMs) };
  }
}

function describeFailure(err: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (signal.aborted) return `no answer within ${timeoutMs} ms`;
  const code = typeof err === 'object' && err !== null && 'code' in err ? String(err.code) : '';
  // Trying both address families fails with an AggregateError whose message is empty.
  const message =
    err instanceof Error && err.message !== '' ? err.message : code !== '' ? code : String(err);
  return `request failed: ${code === '' || message.includes(code) ? message : `${code} ${message}`}`;
}
