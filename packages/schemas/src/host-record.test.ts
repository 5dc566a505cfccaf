import { describe, expect, it } from 'vitest';
import { decodeSampleRecord } from './decode-sample-record.js';
import { toHostRecord } from './host-record.js';
import type { SampleMessage } from './sample-message.js';
import { encodeSampleMessage } from './sample-message.js';
import { encodeSampleRecord, sampleRecordIndexHeader } from './sample-record.js';

const message = (host: string): SampleMessage => ({
  v: 1,
  org_id: 'org_1',
  host,
  time_ms: 1_790_000_000_000,
  received_ms: 1_790_000_000_005,
  metrics: { cpu_percent: 12.5 },
  tags: {},
  containers: [],
  processes: [],
});

describe('toHostRecord', () => {
  const web = encodeSampleMessage(message('web-1'));
  const broken = Buffer.from('{"v":1,"host":');
  const db = encodeSampleMessage(message('db-1'));
  const record = {
    topic: 'metrics.samples.v1',
    partition: 3,
    offset: '41',
    key: 'org_1:web-1',
    value: encodeSampleRecord([web, broken, db]),
    headers: { traceparent: 't' } as Record<string, string>,
    timestampMs: 1_790_000_000_001,
  };
  const decoded = decodeSampleRecord(record.value);
  if (!decoded.ok) throw new Error(decoded.reason);
  const [first, second, third] = decoded.value;

  it("keeps the record's position and gives the host its own message, key and place", () => {
    expect(toHostRecord(record, third!)).toEqual({
      topic: 'metrics.samples.v1',
      partition: 3,
      offset: '41',
      key: 'org_1:db-1',
      value: db,
      headers: { traceparent: 't', [sampleRecordIndexHeader]: '2' },
      timestampMs: 1_790_000_000_001,
    });
    expect(toHostRecord(record, first!).headers[sampleRecordIndexHeader]).toBe('0');
  });

  it("keeps the record's key for a host whose message does not decode", () => {
    const own = toHostRecord(record, second!);
    expect(own.key).toBe('org_1:web-1');
    expect(own.value).toEqual(broken);
    expect(own.headers[sampleRecordIndexHeader]).toBe('1');
  });

  it('gives a value that decodes alone as a format-1 record of that host', () => {
    const own = toHostRecord(record, third!);
    const alone = decodeSampleRecord(own.value);
    expect(
      alone.ok && alone.value.map((host) => host.decoded.ok && host.decoded.value.host),
    ).toEqual(['db-1']);
  });
});
