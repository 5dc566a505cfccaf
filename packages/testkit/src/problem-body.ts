import { expect } from 'vitest';

/**
 * Matches an RFC 9457 problem body of `status`, as every error of our API answers
 * (docs/api.md#errors): a type URL, a title and a detail.
 */
export const problemBody = (status: number) =>
  expect.objectContaining({
    type: expect.stringMatching(/^https:\/\//),
    title: expect.any(String),
    status,
    detail: expect.any(String),
  });
