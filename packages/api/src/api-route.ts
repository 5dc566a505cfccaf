import { z } from 'zod';
import type { ZodType } from 'zod';
import type { Request, Response } from 'express';
import type { IdPrefix } from '@monitor/platform';
import { idSchema } from '@monitor/platform';
import type { QueryInput } from '@monitor/schemas';
import { problemSchema } from '@monitor/schemas';

export const apiBasePath = '/api/v1';

type ApiMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

/** A documented response header: its description, and what its value looks like. */
type ApiHeaderSpec = { description: string; example?: string; pattern?: string };

export type ApiResponseSpec = {
  description: string;
  /** `none`: no body and no Content-Type (a 204); see `noContent`. */
  contentType: 'application/json' | 'application/problem+json' | 'text/plain' | 'none';
  /** The body; a `text/plain` body is a string, a `none` body is `z.undefined()`. */
  schema: ZodType;
  /** Response headers worth documenting, name → description (or a fuller spec). */
  headers?: Readonly<Record<string, string | ApiHeaderSpec>>;
};

/** What a route's handler gets; it answers through `res`. */
type RouteContext<Deps> = {
  params: Request['params'];
  query: QueryInput;
  /** The parsed JSON body of a route that declares one; undefined otherwise. */
  body: unknown;
  res: Response;
  deps: Deps;
};

/**
 * One route of the HTTP interface, declared once: the router serves it (behind `scope`) and the
 * OpenAPI document describes it, and the conformance tests validate real responses with the
 * same schemas, so neither can drift. `Deps` is what its handler needs; an `ApiRoute` (of
 * `never`) is any route, read for its declaration only.
 */
export type ApiRoute<Deps = never> = {
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
    /** `optional`: a request without a body is taken as `{}` (documented as not required). */
    body?: { schema: ZodType; description: string; optional?: boolean };
  };
  responses: Readonly<Record<number, ApiResponseSpec>>;
  /**
   * Runs after the scope check and before the body is read: throws when the path names nothing
   * (404), so that such a request is not judged by its body.
   */
  checkPath?: (params: RouteContext<Deps>['params']) => void;
  /** Absent for what another role serves and this API only documents (ingest, /healthz…). */
  handle?: (context: RouteContext<Deps>) => Promise<void> | void;
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

/** The `:id` path parameter of a resource. */
export const idParams = (prefix: IdPrefix, what: string) =>
  z.object({
    id: idSchema(prefix).meta({
      description: `The ${what} id, \`${prefix}_<ULID>\`. A malformed id is 404, like an unknown one.`,
    }),
  });
