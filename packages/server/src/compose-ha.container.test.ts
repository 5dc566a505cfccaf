import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '@monitor/testkit/builders';
import type { HaComposeStack } from './testing/compose-stack.js';
import { startHaComposeStack } from './testing/compose-stack.js';
import { postIngest } from './testing/ingest-client.js';

/**
 * The compose HA shape (docker-compose.ha.yml, issue 42 item 5): etcd, and TimescaleDB as two
 * Patroni nodes, `db` and `db-2`, in Timescale's HA image (or its local stand-in), every role
 * given both hosts with target_session_attrs=read-write. Under ingest through the edge, the
 * leader's container is killed (`docker kill`, SIGKILL: PostgreSQL and Patroni die at once, no
 * shutdown checkpoint, no handover). Patroni promotes the synchronous standby, and without a
 * restart of any role: every sample the gateway acknowledged, before, during and after, is stored
 * once in the promoted database; every commit the old primary acknowledged is there
 * (synchronous replication); the api serves again. Bounds, not timings.
 */

let stack: HaComposeStack;

beforeAll(async () => {
  stack = await startHaComposeStack();
}, 720_000);

afterAll(async () => {
  await stack?.down();
}, 200_000);

describe('the compose HA shape: the primary container killed under ingest', () => {
  it('promotes the synchronous standby; nothing acknowledged is lost and ingest goes on', async () => {
    const host = 'compose-ha-1';
    const t0 = Date.now() - 10 * 60_000;
    const acknowledged = new Set<number>();
    let sent = 0;
    /** One sample every 10 s of sample time for `host`, through the edge. */
    const send = async (): Promise<void> => {
      const timeMs = t0 + sent * 10_000;
      sent += 1;
      const answer = await postIngest(
        stack.baseUrl,
        { host, timestamp: new Date(timeMs).toISOString(), metrics: { cpu_percent: 50 } },
        { key: stack.bootstrapKey },
      ).catch(() => undefined);
      if (answer?.status === 200) acknowledged.add(timeMs);
    };
    const storedTimes = async (): Promise<number[] | undefined> => {
      const rows = await stack.db.sql<{ ms: number }[]>`
        select s.time_ms::float8 as ms
        from raw_samples(array(select id from series), 0, ${Date.UTC(9999, 0, 1)}) s
        join series r on r.id = s.series_id join services v on v.id = r.service_id
        where v.name = ${host} and r.metric = 'cpu_percent'`.catch(() => undefined);
      return rows?.map((row) => row.ms);
    };

    // The standby streams synchronously before anything is killed.
    const leader = await stack.leader();
    const standby = await stack.syncStandby(120_000);
    expect(standby.service).not.toBe(leader.service);

    // Six samples before the kill, stored by the writer on the first primary.
    while (sent < 6) await send();
    expect(acknowledged.size).toBe(6);
    await waitFor(
      async () => {
        const times = await storedTimes();
        return times !== undefined && times.length >= 6 ? times : undefined;
      },
      60_000,
      'the first samples on the first primary',
    );

    // Commits straight to the primary, up to the kill: each one it acknowledged must be on the
    // standby it promotes (synchronous_mode), whatever Kafka could replay.
    await stack.db.sql`create table ha_probe (n int primary key)`;
    const committed: number[] = [];
    let probing = true;
    const probes = (async () => {
      for (let n = 0; probing; n++) {
        const ok = await stack.db.sql`insert into ha_probe values (${n})`.then(
          () => true,
          () => false,
        );
        if (!ok) break;
        committed.push(n);
      }
    })();
    await waitFor(() => Promise.resolve(committed.length >= 20 || undefined), 30_000, 'probes');

    await stack.kill(leader);
    probing = false;
    await probes;
    expect(await stack.containerState(leader.service)).toEqual({ running: false, exitCode: 137 });
    // Ingest goes on while no primary answers: the gateway needs Kafka (and its key cache).
    for (let i = 0; i < 3; i++) await send();
    const promoted = await stack.leader({ not: leader, timeoutMs: 90_000 });
    expect(promoted.service).toBe(standby.service);
    while (sent < 18) await send();

    const stored = await waitFor(
      async () => {
        const times = await storedTimes();
        if (times === undefined) return undefined;
        return [...acknowledged].every((ms) => times.includes(ms)) ? times : undefined;
      },
      120_000,
      'every acknowledged sample in the promoted database',
    );
    // Once each, and ingest acknowledged samples after the kill.
    expect(new Set(stored).size).toBe(stored.length);
    expect(acknowledged.size).toBeGreaterThanOrEqual(15);
    expect([...acknowledged].filter((ms) => ms >= t0 + 6 * 10_000).length).toBeGreaterThan(0);

    const probed = await stack.db.sql<{ n: number }[]>`select n from ha_probe order by n`;
    expect(committed.length).toBeGreaterThanOrEqual(20);
    expect(probed.map((row) => row.n)).toEqual(expect.arrayContaining(committed));

    // The api follows the promotion without a restart: the host is listed again.
    await waitFor(
      async () => {
        const res = await fetch(`${stack.baseUrl}/api/v1/services`, {
          headers: { 'x-api-key': stack.bootstrapKey },
        }).catch(() => undefined);
        if (res?.status !== 200) return undefined;
        const body = (await res.json()) as { services: { name: string }[] };
        return body.services.some((service) => service.name === host) ? true : undefined;
      },
      60_000,
      'the api to list the host from the promoted database',
    );
  }, 420_000);
});
