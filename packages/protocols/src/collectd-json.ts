import { z } from 'zod';
import type { DecodeOptions, DecodedHostSamples } from './decoded-host-samples.js';
import { ProtocolDecodeError } from './protocol-decode-error.js';
import { createSampleCollector } from './sample-collector.js';

/**
 * One value list of collectd's write_http JSON format (`Format "JSON"`). collectd writes a NaN
 * gauge as `null`. `interval` and `meta` are not used.
 */
const valueListSchema = z
  .object({
    values: z.array(z.number().nullable()).min(1),
    dstypes: z.array(z.string()),
    dsnames: z.array(z.string()),
    time: z.number(),
    interval: z.number().optional(),
    host: z.string(),
    plugin: z.string(),
    plugin_instance: z.string().optional(),
    type: z.string(),
    type_instance: z.string().optional(),
  })
  .refine((list) => list.dsnames.length === list.values.length, {
    message: 'dsnames must name each of the values',
    path: ['dsnames'],
  })
  .refine((list) => list.dstypes.length === list.values.length, {
    message: 'dstypes must type each of the values',
    path: ['dstypes'],
  });

const bodySchema = z.array(valueListSchema);

type ValueList = z.infer<typeof valueListSchema>;

/**
 * `collectd_<plugin>[_<plugin_instance>]_<type>[_<type_instance>][_<dsname>]`, the data-source
 * name only when the list has more than one value (docs/api.md#agent-protocols).
 */
function collectdMetricName(list: ValueList, dsname: string): string {
  const parts = ['collectd', list.plugin];
  if (list.plugin_instance) parts.push(list.plugin_instance);
  parts.push(list.type);
  if (list.type_instance) parts.push(list.type_instance);
  if (list.values.length > 1) parts.push(dsname);
  return parts.join('_');
}

/**
 * collectd's write_http plugin, JSON format: an array of value lists. host = `host`, which is
 * also the series' one label (the only one a value list writes: plugin and type are in the
 * name); the time (float seconds) is rounded to the millisecond. Throws
 * `ProtocolDecodeError` when the body is not such an array, naming the first problem.
 */
export function decodeCollectdJson(body: Uint8Array, options: DecodeOptions): DecodedHostSamples {
  const protocol = 'collectd_json';
  let json: unknown;
  try {
    json = JSON.parse(Buffer.from(body.buffer, body.byteOffset, body.byteLength).toString('utf8'));
  } catch (err) {
    throw new ProtocolDecodeError('malformed_body', protocol, 'The body is not valid JSON.', {
      cause: err,
    });
  }
  const parsed = bodySchema.safeParse(json);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path =
      issue?.path
        .map((part) => (typeof part === 'number' ? `[${part}]` : `.${String(part)}`))
        .join('') ?? '';
    throw new ProtocolDecodeError(
      'malformed_body',
      protocol,
      `The body is not an array of collectd value lists: ${path.replace(/^\./, '') || 'body'}: ${issue?.message ?? 'invalid'}.`,
    );
  }
  const collector = createSampleCollector(options);
  const tags: string[] = [];
  for (const list of parsed.data) {
    tags[0] = 'host';
    tags[1] = list.host;
    const timeMs = Math.round(list.time * 1000);
    list.values.forEach((value, index) => {
      if (value === null) {
        collector.skip('no_value');
        return;
      }
      const metric = collectdMetricName(list, list.dsnames[index] ?? '');
      collector.add(list.host, timeMs, tags, metric, value);
    });
  }
  return collector.result();
}
