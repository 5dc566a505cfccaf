import type { IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningNodeExporter } from './node-exporter.js';
import { startNodeExporter } from './node-exporter.js';
import type { PrometheusRemoteWrite } from './prometheus.js';
import { startPrometheus } from './prometheus.js';
import { isProcessAlive } from '@monitor/platform';
import { waitForAgent } from './wait-for-agent.js';

describe('startPrometheus', () => {
  let exporter: RunningNodeExporter;

  beforeAll(async () => {
    exporter = await startNodeExporter();
  });

  afterAll(async () => {
    await exporter.stop();
  });

  it('remote-writes what it scrapes, snappy-compressed, with the bearer token', async () => {
    const { request, pid } = await firstWriteOfNodeLoad({ bearerToken: 'test-token' });
    expect(request.headers).toMatchObject({
      'content-encoding': 'snappy',
      'content-type': 'application/x-protobuf',
      'x-prometheus-remote-write-version': '0.1.0',
      authorization: 'Bearer test-token',
    });
    const load = seriesOf(request.body).find((s) => s.labels['__name__'] === 'node_load1');
    expect(load?.labels).toEqual({
      __name__: 'node_load1',
      job: 'node',
      instance: exporter.address,
      env: 'int-test',
    });
    expect(load?.samples.length).toBeGreaterThan(0);
    for (const { timestampMs } of load?.samples ?? []) {
      expect(Math.abs(timestampMs - Date.now())).toBeLessThan(60_000);
    }
    expect(isProcessAlive(pid)).toBe(false);
  });

  it('remote-writes with basic auth when given a user and password', async () => {
    const { request, pid } = await firstWriteOfNodeLoad({
      basicAuth: { username: 'prometheus', password: 'api-key' },
    });
    expect(request.headers['authorization']).toBe(
      `Basic ${Buffer.from('prometheus:api-key').toString('base64')}`,
    );
    expect(isProcessAlive(pid)).toBe(false);
  });

  /** Runs Prometheus against a receiver until a request carries node_load1; stops both. */
  async function firstWriteOfNodeLoad(
    auth: Omit<PrometheusRemoteWrite, 'url'>,
  ): Promise<{ request: ReceivedRequest; pid: number }> {
    const receiver = await startReceiver();
    try {
      const prometheus = await startPrometheus({
        scrapeTargets: [{ job: 'node', address: exporter.address, labels: { env: 'int-test' } }],
        remoteWrite: { url: `${receiver.url}/api/v1/write`, ...auth } as PrometheusRemoteWrite,
        scrapeIntervalSeconds: 1,
      });
      try {
        const request = await waitForAgent(
          () =>
            receiver.requests.find((r) =>
              seriesOf(r.body).some((s) => s.labels['__name__'] === 'node_load1'),
            ),
          { timeoutMs: 30_000, what: 'a remote write with node_load1', log: prometheus.tail },
        );
        return { request, pid: prometheus.pid };
      } finally {
        await prometheus.stop();
      }
    } finally {
      await receiver.close();
    }
  }
});

type ReceivedRequest = { headers: IncomingHttpHeaders; body: Buffer };

/** Answers every POST with 204 and keeps it. */
async function startReceiver(): Promise<{
  url: string;
  requests: ReceivedRequest[];
  close(): Promise<void>;
}> {
  const requests: ReceivedRequest[] = [];
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      requests.push({ headers: req.headers, body: Buffer.concat(chunks) });
      res.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

type Series = { labels: Record<string, string>; samples: { value: number; timestampMs: number }[] };

/** The series of a remote-write 1.0 body: a snappy block holding a prometheus.WriteRequest. */
function seriesOf(body: Buffer): Series[] {
  // WriteRequest: 1 timeseries; TimeSeries: 1 labels, 2 samples; Label: 1 name, 2 value;
  // Sample: 1 value (double), 2 timestamp (int64, ms).
  return fieldsOf(snappyUncompress(body))
    .filter((field) => field.number === 1 && Buffer.isBuffer(field.value))
    .map(({ value }) => {
      const series: Series = { labels: {}, samples: [] };
      for (const field of fieldsOf(value as Buffer)) {
        const inner = fieldsOf(field.value as Buffer);
        if (field.number === 1) {
          const text = (n: number) => (inner.find((f) => f.number === n)?.value ?? '').toString();
          series.labels[text(1)] = text(2);
        } else if (field.number === 2) {
          const raw = inner.find((f) => f.number === 1)?.value;
          series.samples.push({
            value: Buffer.isBuffer(raw) ? raw.readDoubleLE(0) : 0,
            timestampMs: Number(inner.find((f) => f.number === 2)?.value ?? 0),
          });
        }
      }
      return series;
    });
}

type Field = { number: number; value: Buffer | bigint };

/** Protobuf's wire format, enough for the messages above: varints, doubles, bytes. */
function fieldsOf(message: Buffer): Field[] {
  const fields: Field[] = [];
  let pos = 0;
  const varint = (): bigint => {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      const byte = message[pos++]!;
      result |= BigInt(byte & 0x7f) << shift;
      if (byte < 0x80) return result;
    }
  };
  while (pos < message.length) {
    const key = Number(varint());
    const number = key >> 3;
    switch (key & 7) {
      case 0:
        fields.push({ number, value: varint() });
        break;
      case 1:
        fields.push({ number, value: message.subarray(pos, (pos += 8)) });
        break;
      case 2: {
        const length = Number(varint());
        fields.push({ number, value: message.subarray(pos, (pos += length)) });
        break;
      }
      case 5:
        fields.push({ number, value: message.subarray(pos, (pos += 4)) });
        break;
      default:
        throw new Error(`unexpected protobuf wire type ${key & 7}`);
    }
  }
  return fields;
}

/** Snappy's block format (remote write's, not the framed one used for streams). */
function snappyUncompress(input: Buffer): Buffer {
  let pos = 0;
  let length = 0;
  for (let factor = 1; ; factor *= 128) {
    const byte = input[pos++]!;
    length += (byte & 0x7f) * factor;
    if (byte < 0x80) break;
  }
  const output = Buffer.alloc(length);
  let out = 0;
  while (pos < input.length) {
    const tag = input[pos++]!;
    if ((tag & 3) === 0) {
      // A literal; lengths over 60 follow the tag in 1-4 little-endian bytes.
      let size = tag >> 2;
      if (size >= 60) {
        const bytes = size - 59;
        size = input.readUIntLE(pos, bytes);
        pos += bytes;
      }
      input.copy(output, out, pos, pos + size + 1);
      pos += size + 1;
      out += size + 1;
      continue;
    }
    // A copy of earlier output, which may overlap what it writes: byte by byte.
    let size: number;
    let offset: number;
    if ((tag & 3) === 1) {
      size = ((tag >> 2) & 7) + 4;
      offset = ((tag >> 5) << 8) | input[pos++]!;
    } else if ((tag & 3) === 2) {
      size = (tag >> 2) + 1;
      offset = input.readUInt16LE(pos);
      pos += 2;
    } else {
      size = (tag >> 2) + 1;
      offset = input.readUInt32LE(pos);
      pos += 4;
    }
    for (let i = 0; i < size; i++, out++) output[out] = output[out - offset]!;
  }
  if (out !== length) throw new Error(`snappy: ${out} bytes out, the header said ${length}`);
  return output;
}
