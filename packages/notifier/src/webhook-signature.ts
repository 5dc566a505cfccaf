import { createHmac, timingSafeEqual } from 'node:crypto';

/** `sha256=<hex>`: HMAC-SHA256, under the target's secret, of `<timestamp>.<body bytes>`. */
export const signatureHeader = 'X-Monitor-Signature';
/** Unix seconds when the message was signed; part of the signed material, so replays age out. */
export const timestampHeader = 'X-Monitor-Timestamp';

const signaturePrefix = 'sha256=';

/** The signature header value of `body` (the exact bytes sent) signed at `timestamp`. */
export function signWebhookBody(secret: string, timestamp: string, body: Uint8Array): string {
  const hmac = createHmac('sha256', secret);
  hmac.update(`${timestamp}.`);
  hmac.update(body);
  return signaturePrefix + hmac.digest('hex');
}

export type VerifyWebhookInput = {
  secret: string;
  /** The raw request body, exactly as received. */
  body: Uint8Array;
  /** The `X-Monitor-Timestamp` header. */
  timestamp: string | undefined;
  /** The `X-Monitor-Signature` header. */
  signature: string | undefined;
  nowMs: number;
  /** Refuses messages signed longer ago (or further ahead) than this; default 300. */
  toleranceSeconds?: number;
};

/**
 * What a receiver does with a webhook: recompute the signature over the raw body and compare in
 * constant time, and refuse stale timestamps. Exported for receivers written in TypeScript and
 * as the executable specification of the scheme.
 */
export function verifyWebhookSignature(input: VerifyWebhookInput): boolean {
  const { timestamp, signature } = input;
  if (timestamp === undefined || signature === undefined || !/^\d{1,12}$/.test(timestamp)) {
    return false;
  }
  const toleranceSeconds = input.toleranceSeconds ?? 300;
  if (Math.abs(input.nowMs / 1000 - Number(timestamp)) > toleranceSeconds) return false;
  const expected = Buffer.from(signWebhookBody(input.secret, timestamp, input.body));
  const received = Buffer.from(signature);
  return received.length === expected.length && timingSafeEqual(received, expected);
}
