import express from 'express';
import type { RequestHandler } from 'express';
import { unsupportedMediaType } from '@monitor/platform';

/** Bodies of the write endpoints are small; this bounds what a client can make us buffer. */
const maxJsonBodyBytes = 1024 * 1024;

const jsonTypes = ['application/json', 'application/*+json'];

const parseJson = express.json({ limit: maxJsonBodyBytes, type: jsonTypes });

/**
 * Parses a JSON request body into `req.body`: another Content-Type is 415, more than
 * `maxJsonBodyBytes` (after gzip) 413, malformed JSON 422 (the problem handler maps
 * body-parser's errors). A request without a body leaves `req.body` undefined, for the schema
 * to refuse.
 */
export const jsonBody: RequestHandler[] = [
  (req, _res, next) => {
    // An empty body without a type (`Content-Length: 0`) is no body: the schema refuses it.
    const empty =
      req.headers['content-type'] === undefined && req.headers['content-length'] === '0';
    // `is` answers null when there is no body at all, false for another type.
    next(!empty && req.is(jsonTypes) === false ? unsupportedMediaType() : undefined);
  },
  parseJson,
];
