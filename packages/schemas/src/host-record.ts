import type { RecordHostSample } from './decode-sample-record.js';
import { sampleMessageKey } from './sample-message.js';
import { sampleRecordIndexHeader } from './sample-record.js';

/** What a host's own record replaces of a bus record (the bus's `ConsumedRecord` has these). */
type SampleRecordFields = {
  key: string | null;
  value: Buffer | null;
  headers: Record<string, string>;
};

/**
 * One host of a record of many hosts as a record of its own, the form in which it is
 * dead-lettered alone: the record's position and timestamp, the host's message as a format-1
 * value, the key the gateway gives that host (`sampleMessageKey`; the record's key when the
 * message does not decode), and its place in the record under `sampleRecordIndexHeader`.
 */
export function toHostRecord<R extends SampleRecordFields>(record: R, host: RecordHostSample): R {
  return {
    ...record,
    key: host.decoded.ok
      ? sampleMessageKey({ org_id: host.decoded.value.orgId, host: host.decoded.value.host })
      : record.key,
    value: host.message,
    headers: { ...record.headers, [sampleRecordIndexHeader]: String(host.index) },
  };
}
