// @services postgres kafka
import { randomBytes } from 'node:crypto';
import { afterAll, describe, expect, it } from 'vitest';
import { waitFor } from '@monitor/testkit/builders';
import { writerGroupId } from './consumer-groups.js';
import { postIngest } from './testing/ingest-client.js';
import type { MonitorStack } from './testing/monitor-stack.js';
import { createMonitorStack } from './testing/monitor-stack.js';
import type { RoleProcess } from './testing/role-process.js';

/**
 * How a consumer group hands partitions over when a replica goes: a SIGTERM'd replica commits
 * and leaves the group at once (the survivor does not wait out a session), and a SIGKILLed one
 * is replaced within the default session, also for a replica that joins meanwhile. Partition
 * ownership is read from the replicas' own "joined consumer group" log lines (their assignment).
 */

const key = `mon_test_${randomBytes(16).toString('hex')}`;
const partitions = 6;
const stacks: MonitorStack[] = [];

afterAll(async () => {
  await Promise.all(stacks.map((stack) => stack.stop()));
});

type JoinLine = {
  atMs: number;
  groupId: string;
  memberId: string;
  partitions: number[];
};

/** The "joined consumer group" lines a role process logged, in order. */
function joinLines(proc: RoleProcess, topic: string): JoinLine[] {
  const lines: JoinLine[] = [];
  for (const line of proc.output().split('\n')) {
    if (!line.includes('joined consumer group')) continue;
    const entry = JSON.parse(line) as {
      time: string;
      groupId: string;
      memberId: string;
      assignment: Record<string, number[]>;
    };
    lines.push({
      atMs: Date.parse(entry.time),
      groupId: entry.groupId,
      memberId: entry.memberId,
      partitions: entry.assignment[topic] ?? [],
    });
  }
  return lines;
}

/**
 * The partitions the processes' members hold now, by the latest join of each member since
 * `sinceMs`; a member that joined before then and not since counts as having none (its group
 * rebalanced or it left).
 */
function partitionsHeld(procs: RoleProcess[], topic: string, sinceMs: number): number[] {
  const latest = new Map<string, JoinLine>();
  for (const proc of procs) {
    for (const line of joinLines(proc, topic)) {
      if (line.atMs >= sinceMs) latest.set(line.memberId, line);
    }
  }
  return [...new Set([...latest.values()].flatMap((line) => line.partitions))].sort(
    (a, b) => a - b,
  );
}

const allPartitions = Array.from({ length: partitions }, (_, i) => i);

/** Waits until the processes' members together hold every partition, joined since `sinceMs`. */
async function holdAll(
  procs: RoleProcess[],
  topic: string,
  sinceMs: number,
  timeoutMs: number,
): Promise<number> {
  try {
    return await waitFor(
      () => {
        const held = partitionsHeld(procs, topic, sinceMs);
        return Promise.resolve(held.length === partitions ? Date.now() : undefined);
      },
      timeoutMs,
      `every partition held by ${procs.map((proc) => proc.pid).join(', ')}`,
    );
  } catch (err) {
    const joins = procs.map((proc) =>
      proc
        .output()
        .split('\n')
        .filter((l) => l.includes('group')),
    );
    throw new Error(`${String(err)}; their group log lines: ${JSON.stringify(joins)}`);
  }
}

/** Waits until both processes hold some partitions and together all of them (one settled group). */
async function shared(first: RoleProcess, second: RoleProcess, topic: string): Promise<void> {
  await waitFor(
    () => {
      const a = partitionsHeld([first], topic, 0);
      const b = partitionsHeld([second], topic, 0);
      const lastA = joinLines(first, topic).at(-1)?.atMs ?? 0;
      const lastB = joinLines(second, topic).at(-1)?.atMs ?? 0;
      // Members of one generation join within moments of each other; the older of two
      // generations lists partitions the newer one moved.
      const union = new Set([
        ...partitionsHeld([first, second], topic, Math.min(lastA, lastB) - 1_000),
      ]);
      return Promise.resolve(
        a.length > 0 && b.length > 0 && union.size === partitions ? true : undefined,
      );
    },
    60_000,
    'two replicas sharing the partitions',
  );
}

async function ingestRound(gatewayUrl: string, round: number, hosts: number): Promise<void> {
  const payloads = Array.from({ length: hosts }, (_, h) => ({
    host: `failover-${h}`,
    timestamp: new Date(Date.now() - 60_000 + round).toISOString(),
    metrics: { cpu_percent: round % 100 },
  }));
  const result = await postIngest(gatewayUrl, payloads, { key });
  expect(result.status).toBe(200);
}

async function storedSamples(stack: MonitorStack): Promise<number> {
  const [row] = await stack.db.sql<{ n: string }[]>`select count(*) as n from samples`;
  return Number(row?.n ?? 0);
}

describe('consumer group failover', () => {
  it('hands a SIGTERMed writer’s partitions over long before its session would expire, nothing lost or stored twice', async () => {
    // A long session, so a survivor that waited for it would be plain to see.
    const sessionTimeoutMs = 30_000;
    const stack = await createMonitorStack('goodbye', {
      MONITOR_BOOTSTRAP_API_KEY: key,
      KAFKA_SESSION_TIMEOUT_MS: String(sessionTimeoutMs),
      KAFKA_HEARTBEAT_INTERVAL_MS: '1000',
    });
    stacks.push(stack);
    const topic = stack.env['SAMPLES_TOPIC']!;
    const [gateway, survivor] = await Promise.all([stack.start('gateway'), stack.start('writer')]);
    await holdAll([survivor], topic, 0, 60_000);
    const leaving = await stack.start('writer');
    await shared(survivor, leaving, topic);

    const hosts = 30;
    let rounds = 0;
    for (; rounds < 5; rounds += 1) await ingestRound(gateway.baseUrl, rounds, hosts);
    const terminatedAtMs = Date.now();
    const exited = leaving.stop();
    // Samples keep arriving while it leaves: they must be stored by whoever owns them.
    for (; rounds < 10; rounds += 1) await ingestRound(gateway.baseUrl, rounds, hosts);
    expect(await exited).toBe(0);
    const heldAtMs = await holdAll([survivor], topic, terminatedAtMs, sessionTimeoutMs);
    expect(heldAtMs - terminatedAtMs).toBeLessThan(sessionTimeoutMs);
    // It committed what it stored, then left: its goodbye is in its log.
    expect(
      leaving
        .output()
        .split('\n')
        .some(
          (line) => line.includes('"hook":"writer consumer"') && line.includes('hook finished'),
        ),
    ).toBe(true);

    const expected = rounds * hosts;
    await waitFor(
      async () => ((await storedSamples(stack)) >= expected ? true : undefined),
      30_000,
      `${expected} stored samples`,
    );
    expect(await storedSamples(stack)).toBe(expected);
    // Caught up: the group's lag in seconds is 0 on the survivor.
    const metrics = await (await fetch(`${survivor.baseUrl}/metrics`)).text();
    expect(metrics).toMatch(/^consumer_lag_seconds\{group="writer"[^}]*\} 0$/m);
    const [offsets] = await stack.db.sql<{ n: string }[]>`
      select count(*) as n from consumer_offsets where group_id = ${writerGroupId}
    `;
    expect(Number(offsets?.n)).toBeGreaterThan(0);
  });

  it('gives a SIGKILLed evaluator’s partitions to the survivor and a replica joining meanwhile within the default session', async () => {
    // The defaults a user gets: no KAFKA_SESSION_TIMEOUT_MS or KAFKA_HEARTBEAT_INTERVAL_MS.
    const sessionTimeoutMs = 6_000;
    const heartbeatIntervalMs = 1_000;
    const stack = await createMonitorStack('sigkill', { MONITOR_BOOTSTRAP_API_KEY: key });
    stacks.push(stack);
    expect(stack.env).not.toHaveProperty('KAFKA_SESSION_TIMEOUT_MS');
    expect(stack.env).not.toHaveProperty('KAFKA_HEARTBEAT_INTERVAL_MS');
    const topic = stack.env['SAMPLES_TOPIC']!;
    const survivor = await stack.start('evaluator');
    await holdAll([survivor], topic, 0, 60_000);
    const killed = await stack.start('evaluator');
    await shared(survivor, killed, topic);

    const killedAtMs = Date.now();
    await killed.kill();
    // Joins while the group still counts the dead member in: it must not wait for more than
    // that member's session.
    const joiner = await stack.start('evaluator');
    const heldAtMs = await holdAll([survivor, joiner], topic, killedAtMs, 60_000);
    // The session, a heartbeat to hear of the rebalance, and a generous allowance for the
    // join and sync round trips and a busy machine: far below the 30 s the old default took.
    expect(heldAtMs - killedAtMs).toBeLessThan(sessionTimeoutMs + 5 * heartbeatIntervalMs + 5_000);
    expect(partitionsHeld([joiner], topic, killedAtMs).length).toBeGreaterThan(0);
    expect(partitionsHeld([survivor, joiner], topic, killedAtMs)).toEqual(allPartitions);
  });
});
