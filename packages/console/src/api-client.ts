import type { Problem } from './api-types.js';

/** A non-2xx answer of the API, with its problem+json body when it had one. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly problem: Problem,
  ) {
    super(problem.detail ?? problem.title ?? `HTTP ${status}`);
    this.name = 'ApiError';
  }
}

export type ApiClient = {
  /** GET `path` (under /api/v1) with `query`; the key goes in `X-API-Key`, never in the URL. */
  get<T>(path: string, query?: Record<string, string | number | undefined>): Promise<T>;
  /** A JSON request; resolves with the body, or undefined for 204. */
  send<T>(method: 'POST' | 'PATCH' | 'DELETE', path: string, body?: unknown): Promise<T>;
  /**
   * GET `path` of the Prometheus-compatible API (under /prometheus/api/v1); resolves with its
   * `data`, or rejects with an ApiError whose title is the `errorType` and detail the `error`.
   */
  prometheus<T>(path: string, query: Record<string, string>): Promise<T>;
};

/**
 * The API as the console calls it. `onUnauthorized` runs on a 401 (the key is unknown or was
 * revoked): the app signs out and says why.
 */
export function createApiClient(
  apiKey: string,
  onUnauthorized: (problem: Problem) => void,
): ApiClient {
  async function request<T>(
    method: string,
    path: string,
    body?: unknown,
    base = '/api/v1',
  ): Promise<T> {
    const headers: Record<string, string> = { 'X-API-Key': apiKey, Accept: 'application/json' };
    if (body !== undefined) headers['Content-Type'] = 'application/json';
    const response = await fetch(`${base}${path}`, {
      method,
      headers,
      body: body === undefined ? null : JSON.stringify(body),
      credentials: 'omit',
      cache: 'no-store',
    });
    const text = await response.text();
    if (!response.ok) {
      const problem = parseProblem(text, response.status);
      if (response.status === 401) onUnauthorized(problem);
      throw new ApiError(response.status, problem);
    }
    return (text === '' ? undefined : JSON.parse(text)) as T;
  }
  return {
    get: (path, query = {}) => {
      const params = new URLSearchParams();
      for (const [name, value] of Object.entries(query)) {
        if (value !== undefined && value !== '') params.set(name, String(value));
      }
      const search = params.toString();
      return request('GET', search === '' ? path : `${path}?${search}`);
    },
    send: (method, path, body) => request(method, path, body),
    prometheus: async <T>(path: string, query: Record<string, string>) => {
      const search = new URLSearchParams(query).toString();
      const answer = await request<{ data: T }>(
        'GET',
        `${path}?${search}`,
        undefined,
        '/prometheus/api/v1',
      );
      return answer.data;
    },
  };
}

function parseProblem(text: string, status: number): Problem {
  try {
    const parsed = JSON.parse(text) as unknown;
    if (isPrometheusError(parsed)) {
      return { status, title: parsed.errorType, detail: parsed.error };
    }
    if (typeof parsed === 'object' && parsed !== null) return parsed;
  } catch {
    // not JSON: a proxy's page, say
  }
  return { status, title: `HTTP ${status}` };
}

/** The Prometheus API's error body: `{"status":"error","errorType","error"}`. */
function isPrometheusError(value: unknown): value is { errorType: string; error: string } {
  if (typeof value !== 'object' || value === null) return false;
  const body = value as Record<string, unknown>;
  return (
    body['status'] === 'error' &&
    typeof body['errorType'] === 'string' &&
    typeof body['error'] === 'string'
  );
}

/** What a person should read for a failed call: 401 and 403 say what to do about them. */
export function describeError(error: unknown): string {
  if (error instanceof ApiError) {
    if (error.status === 401)
      return 'The API key was refused (401): sign in again with a valid key.';
    if (error.status === 403)
      return `This API key lacks the scope for that (403): ${error.problem.detail ?? 'use a key with the needed scope'}.`;
    return `${error.problem.title ?? `HTTP ${error.status}`}${error.problem.detail ? `: ${error.problem.detail}` : ''}`;
  }
  return error instanceof Error ? error.message : String(error);
}

/**
 * Every item of a paginated list, fetched a page (100) at a time; the pages after the first go
 * out `concurrency` at a time. `onPage` sees the items gathered so far after each page, so a
 * view can draw its first screen before the last page arrives.
 */
export async function fetchAllPages<T>(
  api: ApiClient,
  path: string,
  itemsKey: string,
  query: Record<string, string | undefined>,
  onPage: (items: T[], total: number) => void,
  concurrency = 6,
): Promise<T[]> {
  type Page = { pagination: { total: number } } & Record<string, unknown>;
  const limit = 100;
  const first = await api.get<Page>(path, { ...query, limit, offset: 0 });
  const total = first.pagination.total;
  const pages: T[][] = [first[itemsKey] as T[]];
  onPage(pages[0] ?? [], total);
  const offsets: number[] = [];
  for (let offset = limit; offset < total; offset += limit) offsets.push(offset);
  let next = 0;
  async function worker(): Promise<void> {
    while (next < offsets.length) {
      const index = next++;
      const offset = offsets[index] ?? 0;
      const page = await api.get<Page>(path, { ...query, limit, offset });
      pages[index + 1] = page[itemsKey] as T[];
      // Only the contiguous prefix, so items stay in the API's order.
      const prefix: T[] = [];
      for (const each of pages) {
        if (each === undefined) break;
        prefix.push(...each);
      }
      onPage(prefix, total);
    }
  }
  await Promise.all(Array.from({ length: Math.min(concurrency, offsets.length) }, worker));
  return pages.flat();
}
