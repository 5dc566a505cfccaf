// @services kafka
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { readMaxValue } from '@monitor/db/bench';
import type { RestartablePostgres } from '@monitor/testkit';
import { startRestartablePostgres } from '@monitor/testkit';
import { waitFor } from '@monitor/testkit/builders';
import { postIngest } from './testing/ingest-client.js';
import type { MonitorStack } from './testing/monitor-stack.js';
import { createMonitorStack } from './testing/monitor-stack.js';
import type { RoleProcess } from './testing/role-process.js';

const key = `mon_test_${randomBytes(16).toString('hex')}`;
const host = 'restart-1';
/** The writer's default Kafka session: the outage lasts more than twice as long. */
const sessionTimeoutMs = 6_000;
/**
 * Storage resumes within a second of the database accepting writes (issue 60); three allow for
 * a shared machine and this test's own 50 ms polls. Without the fix the writer's next retry came
 * up to 10 s after the restart, and its group rebalanced first.
 */
const resumeBoundMs = 3_000;

let postgres: RestartablePostgres | undefined;
let stack: MonitorStack | undefined;

afterAll(async () => {
  // The stack drops its database: the server must be up for that.
  await postgres?.start();
  await stack?.stop();
  await postgres?.destroy();
});

/** The member ids of the writer's "joined consumer group" lines, with their log times. */
function groupJoins(writer: RoleProcess): { memberId: string; atMs: number }[] {
  return writer
    .output()
    .split('\n')
    .filter((line) => line.includes('joined consumer group'))
    .map((line) => {
      const entry = JSON.parse(line) as { memberId: string; time: string | number };
      return { memberId: entry.memberId, atMs: new Date(entry.time).getTime() };
    });
}

describe('the writer role while PostgreSQL is away longer than its Kafka session', () => {
  it('keeps its group membership, and stores the samples it waited with once the server accepts writes again', async () => {
    const server = await startRestartablePostgres();
    postgres = server;
    stack = await createMonitorStack(
      'writer_db_restart',
      { MONITOR_BOOTSTRAP_API_KEY: key, KAFKA_SESSION_TIMEOUT_MS: String(sessionTimeoutMs) },
      { postgresUrl: server.url },
    );
    const { db } = stack;
    const gateway = await stack.start('gateway');
    const writer = await stack.start('writer');
    const send = async (timeMs: number, value: number): Promise<void> => {
      const reply = await postIngest(
        gateway.baseUrl,
        { host, timestamp: new Date(timeMs).toISOString(), metrics: { cpu_percent: value } },
        { key },
      );
      expect(reply.status).toBe(200);
    };
    const storedMax = (): Promise<number | null> =>
      readMaxValue(db, host, 'cpu_percent').catch(() => null);

    const t0 = Date.now() - 60_000;
    await send(t0, 1);
    await waitFor(async () => ((await storedMax()) === 1 ? true : undefined), 30_000, 'sample 1');
    // Each of the process's consumers (WRITER_CONSUMERS) is a member of the group.
    const joined = groupJoins(writer);
    expect(joined.length).toBeGreaterThan(0);

    await server.stop();
    // Acknowledged by the gateway (Kafka and its cached key) while nothing can store it.
    await send(t0 + 10_000, 2);
    await waitFor(
      () => (writer.output().includes('storage write failed; retrying') ? true : undefined),
      30_000,
      'the writer to fail a write',
    );
    await new Promise((resolve) => setTimeout(resolve, 2 * sessionTimeoutMs + 2_000));
    await server.start();
    const acceptingAtMs = Date.now();
    await waitFor(async () => ((await storedMax()) === 2 ? true : undefined), 30_000, 'sample 2');
    const storedAfterMs = Date.now() - acceptingAtMs;

    // No rebalance: the joins before the outage and no other, the same members all along.
    expect(groupJoins(writer)).toEqual(joined);
    expect(writer.output()).not.toContain('not aware of this member');
    expect(storedAfterMs).toBeLessThan(resumeBoundMs);
    expect(writer.ended()).toBeUndefined();
  }, 120_000);
});
