import type { DeliveryResult } from './notification-sender.js';

/** The `fetch` the HTTP senders use; injectable so unit tests need no network. */
export type Fetch = typeof fetch;

/** What the Slack and webhook senders are built with. */
export type HttpSenderOptions = {
  /** Bounds each POST, the answer included. */
  timeoutMs: number;
  /** Default: the global fetch. */
  fetch?: Fetch;
};

export type HttpPostOptions = {
  url: string;
  body: Uint8Array;
  headers: Readonly<Record<string, string>>;
  /** Bounds the whole exchange, the answer's body included. */
  timeoutMs: number;
  fetch: Fetch;
};

/** Characters of a failed answer's body kept in the attempt's detail. */
const maxDetailBodyChars = 200;
/** Bytes of an answer read at most: the detail needs only its start. */
const maxReadBytes = 4096;

/**
 * POSTs the body and reports the attempt: delivered on a 2xx answer; any other status (3xx
 * redirects are not followed), a network error or the timeout is a failed attempt.
 */
export async function httpPost(options: HttpPostOptions): Promise<DeliveryResult> {
  const signal = AbortSignal.timeout(options.timeoutMs);
  try {
    const response = await options.fetch(options.url, {
      method: 'POST',
      headers: { 'User-Agent': 'monitor-notifier', ...options.headers },
      body: options.body,
      redirect: 'manual',
      signal,
    });
    const status = `HTTP ${response.status}`;
    const delivered = response.status >= 200 && response.status < 300;
    const text = await readStart(response);
    if (delivered || text === '') return { delivered, detail: status };
    return { delivered, detail: `${status}: ${text}` };
  } catch (err) {
    return { delivered: false, detail: describeFailure(err, signal, options.timeoutMs) };
  }
}

async function readStart(response: Response): Promise<string> {
  if (response.body === null) return '';
  const reader = (response.body as ReadableStream<Uint8Array>).getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  while (size < maxReadBytes) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
  }
  await reader.cancel();
  const text = Buffer.concat(chunks).toString('utf8').replace(/\s+/g, ' ').trim();
  return text.length > maxDetailBodyChars ? `${text.slice(0, maxDetailBodyChars)}…` : text;
}

function describeFailure(err: unknown, signal: AbortSignal, timeoutMs: number): string {
  if (signal.aborted) return `no answer within ${timeoutMs} ms`;
  // undici reports network errors as `TypeError: fetch failed` with the system error as cause.
  const cause = err instanceof Error && err.cause instanceof Error ? err.cause : err;
  const code =
    typeof cause === 'object' && cause !== null && 'code' in cause ? String(cause.code) : '';
  const message = cause instanceof Error ? cause.message : String(cause);
  return `request failed: ${code === '' || message.includes(code) ? message : `${code} ${message}`}`;
}
