import { newId } from '@monitor/platform';
import type { ApiKeyScope } from './api-key.js';
import { apiKeyDisplayPrefix, generateApiKey, hashApiKey, isApiKeyScope } from './api-key.js';
import type { Database } from '../core/database.js';
import { expectRow } from '../core/expect-row.js';

/** A stored key as listings show it: never the key itself nor its hash. */
type ApiKeyRecord = {
  id: string;
  orgId: string;
  name: string;
  /** The non-secret start of the key, e.g. `mon_AbCdEfGh`. */
  prefix: string;
  scopes: ApiKeyScope[];
  createdAt: Date;
  revokedAt: Date | null;
};

/** What authentication needs to know about a valid key. */
type ActiveApiKey = { id: string; orgId: string; scopes: ApiKeyScope[] };

type NewApiKey = { orgId: string; name: string; scopes: readonly ApiKeyScope[] };

export type ApiKeyStore = {
  /** Creates a random key. `key` is the plaintext: shown once, never stored. */
  createKey(input: NewApiKey): Promise<{ key: string; record: ApiKeyRecord }>;
  /**
   * Stores a given plaintext key (MONITOR_BOOTSTRAP_API_KEY) unless it is stored already;
   * returns the stored record either way. Idempotent; an existing key keeps its organization,
   * scopes and revocation (a revoked bootstrap key stays revoked: check `revokedAt`).
   */
  ensureKey(plaintext: string, input: NewApiKey): Promise<ApiKeyRecord>;
  /** The unrevoked key with this SHA-256 hash (see hashApiKey), else undefined. */
  findActiveKeyByHash(hash: Buffer): Promise<ActiveApiKey | undefined>;
  /** Keys of one organization, or of all, newest first (revoked ones included). */
  listKeys(orgId?: string): Promise<ApiKeyRecord[]>;
  /** Revokes the key (idempotent); undefined when there is no key with this id. */
  revokeKey(id: string): Promise<ApiKeyRecord | undefined>;
};

type ApiKeyRow = {
  id: string;
  org_id: string;
  name: string;
  key_prefix: string;
  scopes: string[];
  created_at: Date;
  revoked_at: Date | null;
};

export function createApiKeyStore(db: Database): ApiKeyStore {
  const { sql } = db;

  async function insert(plaintext: string, input: NewApiKey): Promise<ApiKeyRow | undefined> {
    const rows = await sql<ApiKeyRow[]>`
      insert into api_keys (id, org_id, name, key_hash, key_prefix, scopes)
      values (
        ${newId('key')}, ${input.orgId}, ${input.name}, ${hashApiKey(plaintext)},
        ${apiKeyDisplayPrefix(plaintext)}, ${checkScopes(input.scopes)}::text[]
      )
      on conflict (key_hash) do nothing
      returning id, org_id, name, key_prefix, scopes, created_at, revoked_at
    `;
    return rows[0];
  }

  return {
    async createKey(input) {
      const key = generateApiKey();
      const row = await insert(key, input);
      // 256 random bits cannot collide in practice; fail loudly rather than hand out a key
      // that belongs to someone else.
      if (row === undefined) throw new Error('generated API key collides with a stored key');
      return { key, record: toRecord(row) };
    },

    async ensureKey(plaintext, input) {
      if (plaintext === '') throw new RangeError('API key must not be empty');
      const inserted = await insert(plaintext, input);
      if (inserted !== undefined) return toRecord(inserted);
      const rows = await sql<ApiKeyRow[]>`
        select id, org_id, name, key_prefix, scopes, created_at, revoked_at
        from api_keys where key_hash = ${hashApiKey(plaintext)}
      `;
      return toRecord(expectRow(rows, 'select the existing API key'));
    },

    async findActiveKeyByHash(hash) {
      const [row] = await sql<Pick<ApiKeyRow, 'id' | 'org_id' | 'scopes'>[]>`
        select id, org_id, scopes from api_keys
        where key_hash = ${hash} and revoked_at is null
      `;
      if (row === undefined) return undefined;
      return { id: row.id, orgId: row.org_id, scopes: row.scopes.filter(isApiKeyScope) };
    },

    async listKeys(orgId) {
      const rows = await sql<ApiKeyRow[]>`
        select id, org_id, name, key_prefix, scopes, created_at, revoked_at
        from api_keys
        ${orgId === undefined ? sql`` : sql`where org_id = ${orgId}`}
        order by created_at desc, id desc
      `;
      return rows.map(toRecord);
    },

    async revokeKey(id) {
      const [row] = await sql<ApiKeyRow[]>`
        update api_keys set revoked_at = coalesce(revoked_at, now())
        where id = ${id}
        returning id, org_id, name, key_prefix, scopes, created_at, revoked_at
      `;
      return row === undefined ? undefined : toRecord(row);
    },
  };
}

/** At least one scope, each known, without duplicates (the table checks the same). */
function checkScopes(scopes: readonly ApiKeyScope[]): ApiKeyScope[] {
  const unique = [...new Set(scopes)];
  if (unique.length === 0) throw new RangeError('an API key needs at least one scope');
  for (const scope of unique) {
    if (!isApiKeyScope(scope)) throw new RangeError(`unknown API key scope '${String(scope)}'`);
  }
  return unique;
}

function toRecord(row: ApiKeyRow): ApiKeyRecord {
  return {
    id: row.id,
    orgId: row.org_id,
    name: row.name,
    prefix: row.key_prefix,
    scopes: row.scopes.filter(isApiKeyScope),
    createdAt: row.created_at,
    revokedAt: row.revoked_at,
  };
}
