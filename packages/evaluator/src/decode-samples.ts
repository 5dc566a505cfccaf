import type { ConsumedRecord } from '@monitor/bus';
import type { DecodedSample, SampleRecordDecoder } from '@monitor/schemas';
import { decodeSampleRecord, toHostRecord } from '@monitor/schemas';
import { hostKey } from './host-windows.js';

/** One host's sample of a record, with its host's key (see hostKey). */
export type DecodedHostSample = { message: DecodedSample; hostKey: string };

/** The records' host samples decoded, in order, with how many records or hosts were undecodable. */
export function decodeSamples(
  records: readonly ConsumedRecord[],
  decodeRecord: SampleRecordDecoder,
): { decoded: DecodedHostSample[]; undecodable: number } {
  const decoded: DecodedHostSample[] = [];
  let undecodable = 0;
  for (const record of records) {
    const result = decodeRecord(record.value);
    if (!result.ok) {
      undecodable++;
      continue;
    }
    // A host that does not decode is passed over alone (the writer dead-letters it); the
    // record's other hosts are evaluated, in the order the record carries them.
    for (const { decoded: host } of result.value) {
      if (!host.ok) undecodable++;
      else
        decoded.push({
          message: host.value,
          hostKey: hostKey(host.value.orgId, host.value.host),
        });
    }
  }
  return { decoded, undecodable };
}

/**
 * The hosts of a record of many hosts, each as a record of its own (same position, its own
 * message, its place in the record in `x-sample-record-index`); one entry for any other record.
 */
export function hostRecordsOf(record: ConsumedRecord): ConsumedRecord[] {
  const decoded = decodeSampleRecord(record.value);
  if (!decoded.ok || decoded.value.length <= 1) return [record];
  return decoded.value.map((host) => toHostRecord(record, host));
}
