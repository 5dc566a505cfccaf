const seed = 0x9747b28c;
const m = 0x5bd1e995;

/**
 * Kafka's murmur2 (the Java client's `Utils.murmur2`, which kafkajs's DefaultPartitioner also
 * implements) of the UTF-8 bytes of `key`, as a signed 32-bit integer.
 */
export function murmur2(key: string | Buffer): number {
  const data = typeof key === 'string' ? Buffer.from(key, 'utf8') : key;
  const length = data.length;
  let h = (seed ^ length) | 0;
  const whole = length - (length % 4);
  for (let i = 0; i < whole; i += 4) {
    let k = data.readInt32LE(i);
    k = Math.imul(k, m);
    k ^= k >>> 24;
    k = Math.imul(k, m);
    h = Math.imul(h, m) ^ k;
  }
  // The tail bytes, highest first (the Java original's fall-through switch).
  const tail = length % 4;
  if (tail >= 3) h ^= (data[whole + 2] ?? 0) << 16;
  if (tail >= 2) h ^= (data[whole + 1] ?? 0) << 8;
  if (tail >= 1) {
    h ^= data[whole] ?? 0;
    h = Math.imul(h, m);
  }
  h ^= h >>> 13;
  h = Math.imul(h, m);
  h ^= h >>> 15;
  return h | 0;
}

/**
 * The partition Kafka's default partitioner picks for `key` among `partitions`: the in-process
 * bus uses it too, so a key maps to the same partition number in both buses.
 */
export function partitionForKey(key: string, partitions: number): number {
  return (murmur2(key) & 0x7fffffff) % partitions;
}
