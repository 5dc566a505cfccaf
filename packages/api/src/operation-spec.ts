import { z } from 'zod';
import type { ZodType } from 'zod';
import { problemSchema } from '@monitor/schemas';

/**
 * The vocabulary of the operation tables (api-operations.ts, notification-operations.ts): the
 * OpenAPI document is generated from them and the conformance tests validate real responses
 * against the same schemas.
 */
export const apiBasePath = '/api/v1';

export type ApiMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** A documented response header: its description, and what its value looks like. */
export type ApiHeaderSpec = { description: string; example?: string; pattern?: string };

export type ApiResponseSpec = {
  description: string;
  /** `none`: no body and no Content-Type (a 204); see `noContent`. */
  contentType: 'application/json' | 'application/problem+json' | 'text/plain' | 'none';
  /** The body; a `text/plain` body is a string, a `none` body is `z.undefined()`. */
  schema: ZodType;
  /** Response headers worth documenting, name → description (or a fuller spec). */
  headers?: Readonly<Record<string, string | ApiHeaderSpec>>;
};

/**
 * One operation of the HTTP interface. The OpenAPI document is generated from this table and
 * the conformance tests validate real responses with the same schemas, so neither can drift.
 */
export type ApiOperation = {
  method: ApiMethod;
  /** Express style (`/api/v1/services/:id`); the document writes `{id}`. */
  path: string;
  operationId: string;
  summary: string;
  description?: string;
  tags: string[];
  /** The API key scope required; `none` for public endpoints. */
  scope: 'read' | 'write' | 'ingest' | 'none';
  request?: {
    params?: z.ZodObject;
    query?: z.ZodObject;
    headers?: z.ZodObject;
    body?: { schema: ZodType; description: string };
  };
  responses: Readonly<Record<number, ApiResponseSpec>>;
};

const problemDescriptions: Readonly<Record<number, string>> = {
  401: 'The API key is missing or unknown.',
  403: 'The API key lacks the scope this operation needs.',
  404: 'No such resource in the caller’s organization (a resource of another organization is 404 too).',
  413: 'The body exceeds 1 MiB after decompression.',
  415: 'The body is not application/json, or its Content-Encoding is not gzip.',
  422: 'A parameter or the body is invalid; `errors` names each one with the reason.',
  429: 'Rate limited: too many requests for this API key.',
  500: 'An unexpected error; it has been logged.',
  503: 'A dependency (database, message bus) is unavailable; retry after `Retry-After` seconds.',
};

const problemHeaders: Readonly<Record<number, Readonly<Record<string, string>>>> = {
  401: { 'WWW-Authenticate': 'Bearer realm="monitor"' },
  429: { 'Retry-After': 'Seconds to wait before trying again.' },
  503: { 'Retry-After': 'Seconds to wait before trying again.' },
};

/** Problem responses for these statuses (401 and 403 come with `scope`, 500 always). */
export function problems(...statuses: number[]): Record<number, ApiResponseSpec> {
  const result: Record<number, ApiResponseSpec> = {};
  for (const status of [...statuses, 500]) {
    const headers = problemHeaders[status];
    result[status] = {
      description: problemDescriptions[status] ?? 'A problem.',
      contentType: 'application/problem+json',
      schema: problemSchema,
      ...(headers === undefined ? {} : { headers }),
    };
  }
  return result;
}

export const json = (description: string, schema: ZodType): ApiResponseSpec => ({
  description,
  contentType: 'application/json',
  schema,
});

/** A response without a body, such as a 204. */
export function noContent(description: string): ApiResponseSpec {
  return { description, contentType: 'none', schema: z.undefined() };
}

/** A 201 or 202 whose `Location` names the resource in the body. */
export const created = (description: string, schema: ZodType): ApiResponseSpec => ({
  ...json(description, schema),
  headers: { Location: 'The path of the resource, e.g. `/api/v1/alerts/rules/rul_…`.' },
});
