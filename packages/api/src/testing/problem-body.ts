import { expect } from 'vitest';

/** A problem body (RFC 9457) of `status`, as every error of the API answers. */
export const problemBody = (status: number) =>
  expect.objectContaining({ type: expect.any(String), title: expect.any(String), status });
