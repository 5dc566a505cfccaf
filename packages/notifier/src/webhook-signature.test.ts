import { describe, expect, it } from 'vitest';
import { signWebhookBody, verifyWebhookSignature } from './webhook-signature.js';

const secret = 'whsec-0123456789abcdef';
const body = Buffer.from('{"transition":"fired"}');
const nowMs = 1_700_000_000_000;

describe('signWebhookBody', () => {
  it('is HMAC-SHA256 of "<timestamp>.<body>" under the secret, in hex', () => {
    // Computed independently: printf '%s' '1700000000.{"transition":"fired"}' |
    //   openssl dgst -sha256 -hmac 'whsec-0123456789abcdef'
    expect(signWebhookBody(secret, '1700000000', body)).toBe(
      'sha256=540fd21dfaad23ebb7418a854c6d8a9cfe14f706f0793b8b6b7a197b64d056fa',
    );
  });
});

describe('verifyWebhookSignature', () => {
  const signature = signWebhookBody(secret, '1700000000', body);
  const valid = { secret, body, timestamp: '1700000000', signature, nowMs };

  it('accepts the signature of the exact body and timestamp', () => {
    expect(verifyWebhookSignature(valid)).toBe(true);
  });

  it('refuses a changed body, timestamp or secret', () => {
    expect(
      verifyWebhookSignature({ ...valid, body: Buffer.from('{"transition":"resolved"}') }),
    ).toBe(false);
    expect(verifyWebhookSignature({ ...valid, body: Buffer.from('{"transition": "fired"}') })).toBe(
      false,
    );
    expect(verifyWebhookSignature({ ...valid, timestamp: '1700000001' })).toBe(false);
    expect(verifyWebhookSignature({ ...valid, secret: `${secret}x` })).toBe(false);
  });

  it('refuses missing or malformed headers', () => {
    expect(verifyWebhookSignature({ ...valid, signature: undefined })).toBe(false);
    expect(verifyWebhookSignature({ ...valid, timestamp: undefined })).toBe(false);
    expect(verifyWebhookSignature({ ...valid, timestamp: '17e8' })).toBe(false);
    expect(verifyWebhookSignature({ ...valid, signature: signature.slice(0, -1) })).toBe(false);
    expect(verifyWebhookSignature({ ...valid, signature: signature.replace('sha256=', '') })).toBe(
      false,
    );
  });

  it('refuses a timestamp outside the tolerance, either way', () => {
    expect(verifyWebhookSignature({ ...valid, nowMs: nowMs + 300_000 })).toBe(true);
    expect(verifyWebhookSignature({ ...valid, nowMs: nowMs + 301_000 })).toBe(false);
    expect(verifyWebhookSignature({ ...valid, nowMs: nowMs - 301_000 })).toBe(false);
    expect(
      verifyWebhookSignature({ ...valid, nowMs: nowMs + 3_600_000, toleranceSeconds: 3_600 }),
    ).toBe(true);
  });
});
