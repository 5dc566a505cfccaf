import type { ServiceSummary } from './sample-batch.js';

/**
 * The services projection's input, as the JSON array the statements read with
 * `jsonb_to_recordset`: per service its org, name, tags, latest value and time of each metric,
 * last_seen (epoch ms), and with `id` the id it gets if it is inserted (`newId`, called per
 * service). Written by hand: it was the consumers thread's largest item under the batched load
 * (`Object.fromEntries` twice per service, then `JSON.stringify`); a property test holds it to
 * that.
 */
export function projectionJson(
  summaries: readonly ServiceSummary[],
  newId: (() => string) | undefined,
): string {
  let json = '[';
  for (const summary of summaries) {
    let metrics = '';
    let times = '';
    for (const [name, { value, timeMs }] of summary.metrics) {
      const key = JSON.stringify(name);
      const comma = metrics === '' ? '' : ',';
      metrics += `${comma}${key}:${JSON.stringify(value)}`;
      times += `${comma}${key}:${JSON.stringify(timeMs)}`;
    }
    const id = newId === undefined ? '' : `"id":${JSON.stringify(newId())},`;
    json +=
      `${json === '[' ? '' : ','}{${id}"org_id":${JSON.stringify(summary.orgId)},` +
      `"name":${JSON.stringify(summary.name)},"tags":${JSON.stringify(summary.tags)},` +
      `"metrics":{${metrics}},"metric_times":{${times}},"last_seen_ms":${JSON.stringify(summary.lastSeenMs)}}`;
  }
  return `${json}]`;
}
