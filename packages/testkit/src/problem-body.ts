import { expect } from 'vitest';

/**
 * Matches an RFC 9457 problem body of `status`, as every error of our API answers
 * (docs/api.md#errors): a type URL, a title and a detail.
 */
export function problemBody(status: number): Record<string, unknown> {
  const fields: Record<string, unknown> = {
    type: expect.stringMatching(/^https:\/\//),
    title: expect.any(String),
    status,
    detail: expect.any(String),
  };
  // An asymmetric matcher: vitest types it `any`.
  return expect.objectContaining(fields) as Record<string, unknown>;
}
