// No @services: a configuration error must stop a role before it reaches any service.
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runMonitor } from './testing/role-process.js';

/** A TCP port that counts every connection made to it: where DATABASE_URL points. */
let server: Server;
let connections = 0;
let databaseUrl = '';

beforeAll(async () => {
  server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  databaseUrl = `postgres://monitor:db-secret@127.0.0.1:${address.port}/monitor`;
});

afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
});

describe('a role with a missing variable', () => {
  it('exits 1 naming KAFKA_BROKERS before it connects to the database (gateway)', async () => {
    const result = await runMonitor(['gateway'], {
      DATABASE_URL: databaseUrl,
      // Before role schemas, the key was written to the database before KAFKA_BROKERS was checked.
      MONITOR_BOOTSTRAP_API_KEY: 'mon_bootstrap_secret',
      PORT: '0',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('monitor gateway: invalid configuration');
    expect(result.stderr).toMatch(/KAFKA_BROKERS: is required but not set/);
    expect(result.stderr + result.stdout).not.toMatch(/db-secret|mon_bootstrap_secret/);
    expect(connections).toBe(0);
  });

  it('names every bad variable at once, never a value', async () => {
    const result = await runMonitor(['writer'], {
      DATABASE_URL: 'mysql://monitor:db-secret@127.0.0.1/monitor',
      WRITER_CONSUMERS: 'lots',
    });
    expect(result.code).toBe(1);
    for (const variable of ['DATABASE_URL', 'KAFKA_BROKERS', 'WRITER_CONSUMERS']) {
      expect(result.stderr).toContain(`  ${variable}: `);
    }
    expect(result.stderr).not.toMatch(/db-secret|lots/);
    expect(connections).toBe(0);
  });

  it('an admin command checks only what it reads', async () => {
    const result = await runMonitor(['migrate'], {
      DATABASE_URL: 'mysql://monitor:db-secret@127.0.0.1/monitor',
      // The gateway's; the commands read KAFKA_BROKERS (`monitor shards move`), not this.
      INGEST_BUS_ENCODING: 'xml',
    });
    expect(result.code).toBe(1);
    expect(result.stderr).toContain('DATABASE_URL: must be a URL with scheme postgres://');
    expect(result.stderr).not.toContain('INGEST_BUS_ENCODING');
    expect(result.stderr).not.toContain('db-secret');
  });
});
