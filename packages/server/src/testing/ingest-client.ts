import { gzipSync } from 'node:zlib';

export type IngestResult = { status: number; headers: Headers; body: unknown };

/** POSTs a JSON body to the gateway's ingest endpoint. */
export async function postIngest(
  baseUrl: string,
  body: unknown,
  options: { key?: string; contentType?: string; gzip?: boolean; raw?: string | Buffer } = {},
): Promise<IngestResult> {
  const payload = options.raw ?? JSON.stringify(body);
  const headers: Record<string, string> = {
    'content-type': options.contentType ?? 'application/json',
  };
  if (options.key !== undefined) headers['x-api-key'] = options.key;
  let data: string | Buffer = payload;
  if (options.gzip) {
    headers['content-encoding'] = 'gzip';
    data = gzipSync(payload);
  }
  const response = await fetch(`${baseUrl}/api/v1/ingest`, { method: 'POST', headers, body: data });
  const text = await response.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {
    // not JSON: keep the text
  }
  return { status: response.status, headers: response.headers, body: parsed };
}
