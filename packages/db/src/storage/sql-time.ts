/** SQL for moving between timestamptz and epoch milliseconds, shared by the read functions. */

/** Epoch milliseconds of a timestamptz, exact for whole milliseconds. */
export const epochMs = (time: string): string => `(extract(epoch from ${time}) * 1000)::bigint`;

/** The timestamptz of epoch milliseconds (`ms` a bigint expression). */
export const timestamp = (ms: string): string =>
  `timestamptz 'epoch' + ${ms} * interval '1 millisecond'`;
