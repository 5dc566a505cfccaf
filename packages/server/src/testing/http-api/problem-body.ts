import { expect } from 'vitest';

/** An RFC 9457 problem body of `status`, as every error of the API answers (docs/api.md#errors). */
export const problemBody = (status: number) =>
  expect.objectContaining({
    type: expect.stringMatching(/^https:\/\//),
    title: expect.any(String),
    status,
    detail: expect.any(String),
  });
