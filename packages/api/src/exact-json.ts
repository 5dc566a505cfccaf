import type { Response } from 'express';

/** What −0 is replaced with while the body is stringified: no metric name or time holds a NUL. */
const negativeZeroMarker = '\u0000-0';
const negativeZeroJson = JSON.stringify(negativeZeroMarker);

/**
 * Sends `body` as JSON with every number as it is, −0 included: `JSON.stringify` writes −0 as
 * `0`, while sample values read back bit for bit (`-0` is valid JSON, and `JSON.parse` gives −0
 * back). Only a body that holds a −0 takes the slower path.
 */
export function sendExactJson(res: Response, body: unknown, hasNegativeZero: boolean): void {
  const text = hasNegativeZero
    ? JSON.stringify(body, (_key, value: unknown) =>
        Object.is(value, -0) ? negativeZeroMarker : value,
      ).replaceAll(negativeZeroJson, '-0')
    : JSON.stringify(body);
  res.type('application/json').send(text);
}
