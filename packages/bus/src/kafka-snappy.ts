import kafkajs, { CompressionTypes } from 'kafkajs';
import snappy from 'snappy';

/**
 * A produce request of at least this many bytes of values goes out snappy-compressed. Host
 * sample messages are JSON whose keys and metric names repeat, so snappy shrinks them several
 * times over at well under a nanosecond per byte, and every byte saved is a byte the producer
 * does not checksum (kafkajs' CRC32C is JavaScript) or write to its socket, the broker does not
 * store, and each consumer group does not fetch. Smaller requests (single-host loads, whose
 * publishes hold a few hosts) cost more in the codec's call than they save.
 */
export const snappyFromBytes = 16 * 1024;

/** snappy-java's stream header: Kafka's Java clients frame their snappy batches in it. */
const xerialMagic = Buffer.from([0x82, 0x53, 0x4e, 0x41, 0x50, 0x50, 0x59, 0x00]);
/** The magic, then the format's version and its compatible version (4 bytes each). */
const xerialHeaderBytes = 16;

function uncompressBlock(block: Buffer): Buffer {
  const plain = snappy.uncompressSync(block);
  return typeof plain === 'string' ? Buffer.from(plain) : plain;
}

/**
 * The records of a snappy-compressed batch: one raw snappy block (what this codec and kafkajs'
 * other snappy codecs write), or snappy-java's framing (what the Java producer writes): the
 * header, then blocks each preceded by its 4-byte big-endian length. Throws on a broken one.
 */
export function snappyRecords(compressed: Buffer): Buffer {
  const framed =
    compressed.length >= xerialHeaderBytes &&
    compressed.subarray(0, xerialMagic.length).equals(xerialMagic);
  if (!framed) return uncompressBlock(compressed);
  const blocks: Buffer[] = [];
  let offset = xerialHeaderBytes;
  while (offset < compressed.length) {
    if (offset + 4 > compressed.length) throw new RangeError('a snappy block length is cut off');
    const length = compressed.readUInt32BE(offset);
    offset += 4;
    if (offset + length > compressed.length) throw new RangeError('a snappy block is cut off');
    blocks.push(uncompressBlock(compressed.subarray(offset, offset + length)));
    offset += length;
  }
  return Buffer.concat(blocks);
}

/** kafkajs' codec interface. Synchronous inside: a thread-pool hop per batch costs more. */
const snappyCodec = {
  compress(encoder: { buffer: Buffer }): Promise<Buffer> {
    return Promise.resolve(snappy.compressSync(encoder.buffer));
  },
  decompress(compressed: Buffer): Promise<Buffer> {
    return new Promise((resolve) => resolve(snappyRecords(compressed)));
  },
};

/**
 * Gives kafkajs its snappy codec (it ships none): for the producer's compressed requests and for
 * reading any snappy batch. kafkajs keeps codecs in one table per process; every bus sets this
 * same codec, so setting it again changes nothing.
 */
export function useSnappyCodec(): void {
  kafkajs.CompressionCodecs[CompressionTypes.Snappy] = () => snappyCodec;
}

/** The compression of a produce request whose values total `valueBytes`. */
export function compressionFor(valueBytes: number): CompressionTypes {
  return valueBytes >= snappyFromBytes ? CompressionTypes.Snappy : CompressionTypes.None;
}
