/** One request a test made and what the API answered, for the OpenAPI conformance checks. */
export type ApiExchange = {
  method: string;
  /** The path and query as requested, without the base URL. */
  path: string;
  status: number;
  /** `''` when the response had no Content-Type (a 204). */
  contentType: string;
  body: unknown;
};

export type ApiReply<T = unknown> = { status: number; headers: Headers; body: T };

export type ApiRequest = {
  /** `GET` unless given. */
  method?: string;
  /** Sent as `X-API-Key`; the caller's default key when omitted. */
  key?: string;
  /** Sent as `Authorization: Bearer …`. */
  bearer?: string;
  /** Sent as JSON. */
  body?: unknown;
  /** Sent as is with its Content-Type, instead of `body`: malformed JSON, YAML, a form, gzip. */
  raw?: { data: string | Buffer; contentType: string };
  /** More headers, sent last (they win over the ones above). */
  headers?: Record<string, string>;
};

/** Sends one request to `path` (with its query) and reads the answer. */
export type ApiCall = <T = unknown>(path: string, request?: ApiRequest) => Promise<ApiReply<T>>;

type Lazy<T> = T | (() => T);

const resolve = <T>(value: Lazy<T>): T =>
  typeof value === 'function' ? (value as () => T)() : value;

/**
 * The one way tests call an HTTP API (ours, or Prometheus' as an oracle): a JSON body
 * (problem+json included) comes back parsed, another body as text, none as `undefined`. Each
 * exchange is appended to `exchanges` when given, for the OpenAPI conformance checks. The base
 * URL and the default key may be given as functions, read at each call: a suite declares its
 * calls before its `beforeAll` has started the target.
 */
export function createApiCall(options: {
  baseUrl: Lazy<string>;
  key?: Lazy<string>;
  exchanges?: ApiExchange[];
}): ApiCall {
  return async <T = unknown>(path: string, request: ApiRequest = {}): Promise<ApiReply<T>> => {
    const method = request.method ?? 'GET';
    const headers: Record<string, string> = {};
    const key = request.key ?? (options.key === undefined ? undefined : resolve(options.key));
    if (key !== undefined) headers['x-api-key'] = key;
    if (request.bearer !== undefined) headers['authorization'] = `Bearer ${request.bearer}`;
    let sent: string | Buffer | undefined;
    if (request.raw !== undefined) {
      headers['content-type'] = request.raw.contentType;
      sent = request.raw.data;
    } else if (request.body !== undefined) {
      headers['content-type'] = 'application/json';
      sent = JSON.stringify(request.body);
    }
    Object.assign(headers, request.headers);
    const response = await fetch(resolve(options.baseUrl) + path, { method, headers, body: sent });
    const contentType = response.headers.get('content-type') ?? '';
    const text = await response.text();
    const body: unknown =
      text === '' ? undefined : contentType.includes('json') ? JSON.parse(text) : text;
    options.exchanges?.push({ method, path, status: response.status, contentType, body });
    return { status: response.status, headers: response.headers, body: body as T };
  };
}
