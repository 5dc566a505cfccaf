import type { IncomingMessage } from 'node:http';
import { createGunzip } from 'node:zlib';

export type ReadBodyResult =
  { ok: true; body: Buffer } | { ok: false; reason: 'too_large' | 'bad_encoding' | 'aborted' };

/**
 * Reads a request body of at most `maxBytes`, counted after decompression, while it streams: a
 * body is never buffered past the limit, so a gzip bomb costs at most `maxBytes` of memory.
 * `rawEncodings` are Content-Encodings read as received, for the caller to undo (remote-write's
 * snappy block format, whose decoder checks the declared size before it decompresses).
 */
export function readBody(
  req: IncomingMessage,
  maxBytes: number,
  options: { rawEncodings?: readonly string[] } = {},
): Promise<ReadBodyResult> {
  const encoding = (req.headers['content-encoding'] ?? 'identity').toLowerCase().trim();
  const raw = encoding === 'identity' || (options.rawEncodings ?? []).includes(encoding);
  if (!raw && encoding !== 'gzip') {
    return Promise.resolve({ ok: false, reason: 'bad_encoding' });
  }
  const declared = Number(req.headers['content-length']);
  if (raw && Number.isFinite(declared) && declared > maxBytes) {
    return Promise.resolve({ ok: false, reason: 'too_large' });
  }

  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    let total = 0;
    let settled = false;
    const source = raw ? req : req.pipe(createGunzip());
    const finish = (result: ReadBodyResult): void => {
      if (settled) return;
      settled = true;
      if (!result.ok) {
        source.removeAllListeners('data');
        if (source !== req) {
          req.unpipe();
          source.destroy();
        }
        // Keep reading (and discarding) so the error response can be written; the caller closes
        // the connection once it is sent.
        req.resume();
      }
      resolve(result);
    };
    source.on('data', (chunk: Buffer) => {
      total += chunk.length;
      if (total > maxBytes) {
        finish({ ok: false, reason: 'too_large' });
        return;
      }
      chunks.push(chunk);
    });
    source.on('end', () =>
      finish({ ok: true, body: chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total) }),
    );
    source.on('error', () =>
      finish({ ok: false, reason: source === req ? 'aborted' : 'bad_encoding' }),
    );
    req.on('aborted', () => finish({ ok: false, reason: 'aborted' }));
  });
}
