import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { partitionForKey } from '@monitor/bus';
import type { Database } from '@monitor/db';
import { defaultOrganizationId } from '@monitor/db';
import { waitFor } from '@monitor/testkit/builders';
import type { ShardsComposeStack } from './testing/compose-stack.js';
import { startShardsComposeStack } from './testing/compose-stack.js';
import { postIngest } from './testing/ingest-client.js';

/**
 * The compose sharded shape (docker-compose.shards.yml, issue 59 item 6): `db` is the control
 * database and shard s0, `db-s1` and `db-s2` the other shards, `shards` places partitions 1 and 4
 * on s1 and 2 and 5 on s2 before the roles start. A host of every partition of the samples topic
 * (6, the default) sends through the edge: each host's samples are stored on its partition's
 * shard and nowhere else, and the api's services list and PromQL answer every host, asking
 * every shard.
 */

let stack: ShardsComposeStack;

beforeAll(async () => {
  stack = await startShardsComposeStack();
}, 720_000);

afterAll(async () => {
  await stack?.down();
}, 200_000);

const partitions = 6;
/** docker-compose.shards.yml's placement: s0 keeps the partitions no row names. */
const shardOfPartition = (partition: number): number => partition % 3;

/** One host name per partition, keyed as the gateway keys the bootstrap key's organization. */
function hostPerPartition(): string[] {
  const hosts: string[] = new Array<string>(partitions);
  for (let i = 0, found = 0; found < partitions; i++) {
    const host = `compose-shard-${i}`;
    const partition = partitionForKey(`${defaultOrganizationId}:${host}`, partitions);
    if (hosts[partition] === undefined) {
      hosts[partition] = host;
      found += 1;
    }
  }
  return hosts;
}

/** The hosts whose cpu_percent samples `db` holds, with how many each. */
async function storedSamples(db: Database): Promise<Map<string, number>> {
  const rows = await db.sql<{ host: string; samples: number }[]>`
    select v.name as host, count(*)::int as samples
    from raw_samples(array(select id from series), 0, ${Date.UTC(9999, 0, 1)}) s
    join series r on r.id = s.series_id join services v on v.id = r.service_id
    where v.name like 'compose-shard-%' and r.metric = 'cpu_percent'
    group by v.name`;
  return new Map(rows.map((row) => [row.host, row.samples]));
}

describe('the compose sharded shape', () => {
  it('stores each host on its partition shard, and the api answers over every shard', async () => {
    const placed = await stack.db.sql<{ partition: number; shard: string }[]>`
      select partition, shard from sample_partition_shards order by partition`;
    expect(placed.map((row) => [row.partition, row.shard])).toEqual([
      [1, 's1'],
      [2, 's2'],
      [4, 's1'],
      [5, 's2'],
    ]);

    const hosts = hostPerPartition();
    const t0 = Date.now() - 10 * 60_000;
    for (const host of hosts) {
      for (let step = 0; step < 3; step++) {
        const answer = await postIngest(
          stack.baseUrl,
          {
            host,
            timestamp: new Date(t0 + step * 10_000).toISOString(),
            metrics: { cpu_percent: step },
          },
          { key: stack.bootstrapKey },
        );
        expect(answer.status).toBe(200);
      }
    }

    const stored = await waitFor(
      async () => {
        const perShard = await Promise.all(stack.shardDbs.map(storedSamples));
        const total = perShard.reduce(
          (n, shard) => n + [...shard.values()].reduce((a, b) => a + b, 0),
          0,
        );
        return total >= hosts.length * 3 ? perShard : undefined;
      },
      120_000,
      'every host sample on a shard',
    );
    hosts.forEach((host, partition) => {
      stored.forEach((shard, index) => {
        expect(shard.get(host), `${host} (partition ${partition}) on s${index}`).toBe(
          index === shardOfPartition(partition) ? 3 : undefined,
        );
      });
    });

    const headers = { 'x-api-key': stack.bootstrapKey };
    const services = await fetch(`${stack.baseUrl}/api/v1/services?limit=100`, { headers });
    expect(services.status).toBe(200);
    const listed = ((await services.json()) as { services: { name: string }[] }).services
      .map((service) => service.name)
      .filter((name) => name.startsWith('compose-shard-'));
    expect(listed.sort()).toEqual([...hosts].sort());

    const query = new URL('/prometheus/api/v1/query', stack.baseUrl);
    query.search = new URLSearchParams({
      query: 'max_over_time(cpu_percent{host=~"compose-shard-.*"}[1h])',
    }).toString();
    const answer = await fetch(query, { headers });
    expect(answer.status).toBe(200);
    const body = (await answer.json()) as {
      data: { result: { metric: { host: string }; value: [number, string] }[] };
    };
    expect(body.data.result.map((series) => series.metric.host).sort()).toEqual([...hosts].sort());
    expect(body.data.result.every((series) => series.value[1] === '2')).toBe(true);
  }, 300_000);
});
