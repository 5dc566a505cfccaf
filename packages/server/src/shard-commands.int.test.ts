// @services postgres
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createDatabase } from '@monitor/db';
import type { Database } from '@monitor/db';
import { createTestDatabase } from '@monitor/testkit';
import type { TestDatabase } from '@monitor/testkit';
import { serviceUrl } from '@monitor/testkit/vitest';
import { writerGroupId } from './consumer-groups.js';
import { runCommand, runMonitor } from './testing/role-process.js';

/**
 * `monitor shards list|add|move` (issue 59) against real databases: the control database is
 * shard s0, s1 and s2 start empty (not even migrated).
 */
const topic = `samples-${randomBytes(4).toString('hex')}`;
let control: TestDatabase;
let s1: TestDatabase;
let s2: TestDatabase;
let env: Record<string, string>;
const pools: Database[] = [];

function pool(url: string): Database {
  const db = createDatabase({ url, maxConnections: 1 });
  pools.push(db);
  return db;
}

async function migrated(url: string): Promise<boolean> {
  const [row] = await pool(url).sql<{ found: boolean }[]>`
    select to_regclass('consumer_offsets') is not null as found`;
  return row?.found === true;
}

async function list(): Promise<unknown> {
  return JSON.parse(await runCommand(['shards', 'list'], env)) as unknown;
}

beforeAll(async () => {
  const database = (name: string) => createTestDatabase(serviceUrl('postgres'), name);
  [control, s1, s2] = await Promise.all([
    database('shards_cli'),
    database('shards_cli_s1'),
    database('shards_cli_s2'),
  ]);
  env = {
    DATABASE_URL: control.url,
    SAMPLES_TOPIC: topic,
    SAMPLE_SHARDS: JSON.stringify([
      { name: 's0', url: control.url },
      { name: 's1', url: s1.url },
      { name: 's2', url: s2.url },
    ]),
  };
  // The control database alone, as before the shards were named.
  await runCommand(['migrate'], {
    ...env,
    SAMPLE_SHARDS: JSON.stringify([{ name: 's0', url: control.url }]),
  });
}, 120_000);

afterAll(async () => {
  await Promise.all(pools.map((db) => db.close()));
  for (const db of [control, s1, s2]) await db?.drop();
});

describe('monitor shards', () => {
  it('adds a shard: migrates it and places partitions on it; list shows the map', async () => {
    expect(await migrated(s1.url)).toBe(false);
    await runCommand(['shards', 'add', 's1', '--partitions', '1,3'], env);
    expect(await migrated(s1.url)).toBe(true);
    expect(await migrated(s2.url)).toBe(false);
    expect(await list()).toEqual({
      topic,
      shards: [
        { name: 's0', default: true, partitions: [] },
        { name: 's1', default: false, partitions: [1, 3] },
        { name: 's2', default: false, partitions: [] },
      ],
      unknown: [],
    });
  }, 120_000);

  it('moves a partition with stored samples only through Kafka, and one without by the map', async () => {
    await pool(s1.url).sql`
      insert into consumer_offsets (group_id, topic, partition, next_offset)
      values (${writerGroupId}, ${topic}, 1, 42)`;
    const refused = await runMonitor(['shards', 'move', '--partitions', '1,3', '--to', 's0'], env);
    expect(refused.code).not.toBe(0);
    expect(refused.stderr + refused.stdout).toContain(
      "moving a partition with stored samples needs the deployment's Kafka (KAFKA_BROKERS)",
    );
    const placeOnly = await runMonitor(
      ['shards', 'move', '--place-only', '--partitions', '1,3', '--to', 's0'],
      env,
    );
    expect(placeOnly.code).not.toBe(0);
    expect(placeOnly.stderr + placeOnly.stdout).toContain(
      'shard s1 holds samples of partition 1 (to offset 42): --place-only places',
    );
    // Refused before anything changed: partition 3, without samples, stayed too.
    expect(await list()).toMatchObject({
      shards: [{ partitions: [] }, { partitions: [1, 3] }, { partitions: [] }],
    });
    await runCommand(['shards', 'move', '--partitions', '3', '--to', 's0'], env);
    // Already there, samples and all: nothing to move, nothing refused.
    await runCommand(['shards', 'move', '--partitions', '1', '--to', 's1'], env);
    expect(await list()).toMatchObject({
      shards: [
        { name: 's0', partitions: [3] },
        { name: 's1', partitions: [1] },
        { name: 's2', partitions: [] },
      ],
    });
  }, 120_000);

  it('refuses a bad list, an unknown shard, and a deployment without SAMPLE_SHARDS', async () => {
    const cases: [string[], Record<string, string>, string][] = [
      [['--partitions', '1,x', '--to', 's1'], env, 'a comma-separated list of partition numbers'],
      [['--partitions', '2', '--to', 's9'], env, 'SAMPLE_SHARDS names no shard s9'],
      [
        ['--partitions', '2', '--to', 's1'],
        { DATABASE_URL: control.url },
        'SAMPLE_SHARDS is unset',
      ],
    ];
    for (const [args, withEnv, message] of cases) {
      const result = await runMonitor(['shards', 'move', ...args], withEnv);
      expect(result.code, message).not.toBe(0);
      expect(result.stderr + result.stdout).toContain(message);
    }
    // Nothing of it reached the map.
    expect(await list()).toMatchObject({
      shards: [{ partitions: [3] }, { partitions: [1] }, { partitions: [] }],
    });
  }, 120_000);
});
