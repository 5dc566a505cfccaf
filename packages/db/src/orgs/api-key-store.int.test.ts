// @services postgres timescale
import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Database } from '../core/database.js';
import { migrate } from '../schema/migrate.js';
import { cleanDatabase } from '../testing/clean-database.js';
import { hashApiKey } from './api-key.js';
import { createApiKeyStore } from './api-key-store.js';
import { createOrgStore } from './org-store.js';

describe.each(['postgres', 'timescale'] as const)('organizations and API keys on %s', (engine) => {
  let db: Database;
  let dispose: () => Promise<void>;

  beforeAll(async () => {
    ({ db, dispose } = await cleanDatabase(engine, 'db_orgs'));
    await migrate(db);
  });

  afterAll(async () => {
    await dispose?.();
  });

  it('creates, finds, lists and revokes keys', async () => {
    const orgs = createOrgStore(db);
    const keys = createApiKeyStore(db);
    const org = await orgs.createOrganization('Acme');
    expect(org.id).toMatch(/^org_/);
    expect(await orgs.getOrganization(org.id)).toEqual(org);
    expect(await orgs.getOrganization('org_missing')).toBeUndefined();

    const { key, record } = await keys.createKey({
      orgId: org.id,
      name: 'ci',
      scopes: ['ingest', 'read'],
    });
    expect(key).toMatch(/^mon_[A-Za-z0-9_-]{43}$/);
    expect(record).toMatchObject({
      orgId: org.id,
      name: 'ci',
      scopes: ['ingest', 'read'],
      revokedAt: null,
    });
    expect(key.startsWith(record.prefix)).toBe(true);
    expect(await keys.findActiveKeyByHash(hashApiKey(key))).toEqual({
      id: record.id,
      orgId: org.id,
      scopes: ['ingest', 'read'],
    });
    expect(await keys.findActiveKeyByHash(hashApiKey(`${key}x`))).toBeUndefined();
    expect((await keys.listKeys(org.id)).map((k) => k.id)).toEqual([record.id]);

    const revoked = await keys.revokeKey(record.id);
    expect(revoked?.revokedAt).toBeInstanceOf(Date);
    expect(await keys.findActiveKeyByHash(hashApiKey(key))).toBeUndefined();
    expect((await keys.revokeKey(record.id))?.revokedAt).toEqual(revoked?.revokedAt);
    expect(await keys.revokeKey('key_missing')).toBeUndefined();
    await expect(keys.createKey({ orgId: org.id, name: 'none', scopes: [] })).rejects.toThrow(
      /scope/,
    );
  });

  it('ensures the default organization and the bootstrap key idempotently', async () => {
    const orgs = createOrgStore(db);
    const keys = createApiKeyStore(db);
    const org = await orgs.ensureDefaultOrganization();
    expect(await orgs.ensureDefaultOrganization()).toEqual(org);
    const plaintext = `bootstrap-${randomBytes(16).toString('hex')}`;
    const scopes = ['ingest', 'read', 'write'] as const;
    const first = await keys.ensureKey(plaintext, { orgId: org.id, name: 'bootstrap', scopes });
    const second = await keys.ensureKey(plaintext, { orgId: org.id, name: 'bootstrap', scopes });
    expect(second).toEqual(first);
    expect(await keys.findActiveKeyByHash(hashApiKey(plaintext))).toEqual({
      id: first.id,
      orgId: org.id,
      scopes: ['ingest', 'read', 'write'],
    });
  });
});
