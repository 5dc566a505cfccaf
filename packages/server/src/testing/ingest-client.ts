import { gzipSync } from 'node:zlib';
import type { ApiReply } from '@monitor/testkit/builders';
import { createApiCall } from '@monitor/testkit/builders';

/** POSTs a JSON body (or `raw`, as is) to the gateway's ingest endpoint. */
export async function postIngest(
  baseUrl: string,
  body: unknown,
  options: { key?: string; contentType?: string; gzip?: boolean; raw?: string | Buffer } = {},
): Promise<ApiReply> {
  const payload = options.raw ?? JSON.stringify(body);
  return await createApiCall({ baseUrl })('/api/v1/ingest', {
    method: 'POST',
    key: options.key,
    raw: {
      data: options.gzip ? gzipSync(payload) : payload,
      contentType: options.contentType ?? 'application/json',
    },
    ...(options.gzip ? { headers: { 'content-encoding': 'gzip' } } : {}),
  });
}
