// @services postgres
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadLogResumeOffsets } from './consumer-offsets.js';
import type { Database } from '../core/database.js';
import { createDeadLetterStore } from './dead-letter-store.js';
import { migratedDatabase } from '../testing/clean-database.js';

describe('createDeadLetterStore', () => {
  let db: Database;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase('postgres', 'dead_letter_store'));
  });

  afterAll(async () => {
    await dispose?.();
  });

  it('keeps a record whose key, headers and reason hold what text cannot, bytes intact', async () => {
    const value = Buffer.from('{"host":"x\\u0000y"}');
    await createDeadLetterStore(db).send(
      {
        topic: 'metrics.samples.v1',
        partition: 2,
        offset: '41',
        key: 'org_1:x\u0000y',
        value,
        headers: { 'x-trace\u0000': 'a\u0000b' },
      },
      'cannot be stored: invalid byte sequence 0x00 in "x\u0000y"',
    );
    const [row] = await db.sql<
      {
        topic: string;
        partition: number;
        source_offset: string;
        key: Buffer;
        value: Buffer;
        headers: Record<string, string>;
        reason: string;
      }[]
    >`select topic, partition, source_offset, key, value, headers, reason from dead_letters`;
    expect(row).toMatchObject({ topic: 'metrics.samples.v1', partition: 2, source_offset: '41' });
    expect(row!.key.toString('utf8')).toBe('org_1:x\u0000y');
    expect(row!.value.equals(value)).toBe(true);
    expect(row!.headers).toEqual({ 'x-trace\uFFFD': 'a\uFFFDb' });
    expect(row!.reason).toBe('cannot be stored: invalid byte sequence 0x00 in "x\uFFFDy"');
  });
});

describe('loadLogResumeOffsets', () => {
  let db: Database;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ db, dispose } = await migratedDatabase('postgres', 'log_resume_offsets'));
  });

  afterAll(async () => {
    await dispose?.();
  });

  it('gives each partition the highest next offset any group stored', async () => {
    await db.sql`
      insert into consumer_offsets (group_id, topic, partition, next_offset) values
        ('writer', 't', 0, 120), ('evaluator', 't', 0, 118), ('evaluator', 't', 2, 7),
        ('writer', 'other', 1, 5)
    `;
    const offsets = await loadLogResumeOffsets(db.sql);
    expect(offsets.get('t')).toEqual([120, undefined, 7]);
    expect(offsets.get('other')).toEqual([undefined, 5]);
  });
});
