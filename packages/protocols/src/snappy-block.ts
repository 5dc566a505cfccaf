import { uncompressSync } from 'snappy';
import type { AgentProtocol } from './protocol-decode-error.js';
import { ProtocolDecodeError } from './protocol-decode-error.js';

/**
 * The decompressed length a snappy block declares in its preamble (a little-endian base-128
 * varint of at most 32 bits), or undefined when the preamble is not one.
 */
export function readSnappyDecodedLength(block: Uint8Array): number | undefined {
  let length = 0;
  for (let i = 0; i < 5; i++) {
    const byte = block[i];
    if (byte === undefined) return undefined;
    length += (byte & 0x7f) * 2 ** (7 * i);
    if (byte < 0x80) return length <= 0xffffffff ? length : undefined;
  }
  return undefined;
}

/**
 * Decompresses a snappy block (the block format remote-write uses, not the framed one) of at
 * most `maxDecodedBytes` decompressed. The size is read from the preamble and refused BEFORE
 * anything is allocated or decompressed, so a snappy bomb costs nothing (like the gateway's
 * gzip limit). Returns a plain Uint8Array view: protobufjs decodes strings from one faster than
 * from a Buffer.
 */
export function decompressSnappyBlock(
  block: Uint8Array,
  maxDecodedBytes: number,
  protocol: AgentProtocol,
): Uint8Array {
  const declared = readSnappyDecodedLength(block);
  if (declared === undefined) {
    throw new ProtocolDecodeError(
      'malformed_body',
      protocol,
      'The body is not snappy-compressed (block format): its length preamble is invalid.',
    );
  }
  if (declared > maxDecodedBytes) {
    throw new ProtocolDecodeError(
      'body_too_large',
      protocol,
      `The body decompresses to ${declared} bytes, more than the limit of ${maxDecodedBytes}.`,
    );
  }
  let decoded: Buffer;
  try {
    // copyOutputData: a copy into a V8-owned buffer beats an external buffer's finalizer here
    // (measured: ~3x faster on 250 KB bodies).
    decoded = uncompressSync(block, { asBuffer: true, copyOutputData: true }) as Buffer;
  } catch (err) {
    throw new ProtocolDecodeError(
      'malformed_body',
      protocol,
      'The body is not valid snappy-compressed data (block format).',
      { cause: err },
    );
  }
  return new Uint8Array(decoded.buffer, decoded.byteOffset, decoded.byteLength);
}
