import type { IncomingHttpHeaders } from 'node:http';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { describe, expect, it } from 'vitest';
import { collectdReadPlugins, startCollectd } from './collectd.js';
import { isProcessAlive } from '@monitor/platform';
import { waitForAgent } from './wait-for-agent.js';

/** One element of write_http's JSON array. */
type ValueList = {
  values: (number | null)[];
  dstypes: string[];
  dsnames: string[];
  time: number;
  interval: number;
  host: string;
  plugin: string;
  plugin_instance: string;
  type: string;
  type_instance: string;
};

describe('startCollectd', () => {
  it('posts JSON value lists of its read plugins with basic auth, then stops for good', async () => {
    const credentials = `Basic ${Buffer.from('collectd:secret-api-key').toString('base64')}`;
    const receiver = await startReceiver(credentials);
    try {
      const collectd = await startCollectd({
        writeHttpUrl: `${receiver.url}/collectd`,
        user: 'collectd',
        password: 'secret-api-key',
        hostname: 'int-test-host',
        intervalSeconds: 1,
      });
      let valueLists: ValueList[];
      try {
        // Every plugin, and a rate for the idle CPU counter: its second reading at the earliest.
        valueLists = await waitForAgent(
          () => {
            const lists = receiver.accepted.flatMap((request) => request.valueLists);
            const plugins = new Set(lists.map((list) => list.plugin));
            // The idle counter's rate, which the checks below read (other counters may get
            // their second reading first).
            const hasCpuRate = lists.some(
              (list) =>
                list.plugin === 'cpu' && list.type_instance === 'idle' && list.values[0] !== null,
            );
            return collectdReadPlugins.every((p) => plugins.has(p)) && hasCpuRate
              ? lists
              : undefined;
          },
          { timeoutMs: 20_000, what: 'value lists of every plugin', log: collectd.tail },
        );
      } finally {
        await collectd.stop();
      }
      expect(isProcessAlive(collectd.pid)).toBe(false);

      // libcurl sends the credentials only once challenged (CURLAUTH_ANY), then on every request.
      expect(receiver.challenged).toBeGreaterThanOrEqual(1);
      expect(receiver.accepted[0]?.headers).toMatchObject({
        authorization: credentials,
        'content-type': 'application/json',
      });

      for (const list of valueLists) {
        expect(list).toEqual({
          values: expect.any(Array),
          dstypes: expect.any(Array),
          dsnames: expect.any(Array),
          time: expect.any(Number),
          interval: 1,
          host: 'int-test-host',
          plugin: expect.any(String),
          plugin_instance: expect.any(String),
          type: expect.any(String),
          type_instance: expect.any(String),
        });
        expect(list.values).toHaveLength(list.dsnames.length);
        expect(list.dstypes).toHaveLength(list.dsnames.length);
        // Epoch seconds with a millisecond fraction, not milliseconds.
        expect(Math.abs(list.time - Date.now() / 1_000)).toBeLessThan(60);
      }

      // StoreRates: counters arrive as per-second rates, still typed "derive", and the first
      // reading of each, which has no rate yet, as null.
      const cpu = valueLists.filter((list) => list.plugin === 'cpu');
      expect(cpu.every((list) => list.dstypes.every((type) => type === 'derive'))).toBe(true);
      expect(cpu.some((list) => list.values[0] === null)).toBe(true);
      const idleRates = cpu
        .filter((list) => list.type_instance === 'idle' && list.values[0] !== null)
        .map((list) => list.values[0]!);
      expect(idleRates.length).toBeGreaterThan(0);
      // A core can idle at most USER_HZ (100) jiffies a second; the raw counter is far larger.
      for (const rate of idleRates) expect(rate).toBeLessThan(1_000);

      const load = valueLists.find((list) => list.plugin === 'load');
      expect(load).toMatchObject({
        dsnames: ['shortterm', 'midterm', 'longterm'],
        dstypes: ['gauge', 'gauge', 'gauge'],
      });
    } finally {
      await receiver.close();
    }
  });
});

type Received = { headers: IncomingHttpHeaders; valueLists: ValueList[] };

/**
 * Acts as our endpoint must for collectd: a request without the expected basic-auth header gets
 * 401 with `WWW-Authenticate: Basic`, the challenge libcurl waits for before sending credentials.
 */
async function startReceiver(credentials: string): Promise<{
  url: string;
  accepted: Received[];
  readonly challenged: number;
  close(): Promise<void>;
}> {
  const accepted: Received[] = [];
  let challenged = 0;
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      if (req.headers.authorization !== credentials) {
        challenged++;
        res.writeHead(401, { 'WWW-Authenticate': 'Basic realm="monitor"' }).end();
        return;
      }
      const valueLists = JSON.parse(Buffer.concat(chunks).toString('utf8')) as ValueList[];
      accepted.push({ headers: req.headers, valueLists });
      res.writeHead(200).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    accepted,
    get challenged() {
      return challenged;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
