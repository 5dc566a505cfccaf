import type { SampleMessage } from '@monitor/schemas';

/**
 * A sample message as the gateway publishes it: version 1, received when it was taken, no
 * metrics, tags, containers or processes unless given. Tests name what they test and nothing
 * else.
 */
export function buildSampleMessage(
  fields: Pick<SampleMessage, 'org_id' | 'host' | 'time_ms'> & Partial<SampleMessage>,
): SampleMessage {
  return {
    v: 1,
    received_ms: fields.time_ms,
    metrics: {},
    tags: {},
    containers: [],
    processes: [],
    ...fields,
  };
}
