import { randomBytes } from 'node:crypto';
import type { ApiKeyScope, Database } from '@monitor/db';
import type { Alert } from '@monitor/schemas';
import { createApiKeyStore, createOrgStore, fireAlert } from '@monitor/db';

/**
 * A running monitor that the HTTP API suites (`http-api/*.suite.ts`) test: role processes of this
 * checkout, or the compose stack behind its edge. The suites talk to it over HTTP only, except
 * for setup the API has no route for (organizations, keys, alerts fired without an evaluator)
 * and a few checks of stored rows, which go to its database.
 */
export type ApiTarget = {
  /** Base URL of POST /api/v1/ingest: the gateway, or the edge. */
  readonly ingestUrl: string;
  /** Base URL of the rest of /api/v1 and of /healthz, /readyz, /metrics: the api role, or the edge. */
  readonly apiUrl: string;
  /** A pool on the target's (control) database. */
  readonly db: Database;
  /** Pools on the databases holding samples and services (the sample shards); `[db]` if unset. */
  readonly sampleDbs?: readonly Database[];
};

/**
 * A new organization of its own with one key of `scopes`: each suite keeps its data in its own
 * organization, so suites can share one stack (the compose one) without seeing each other.
 */
export async function newOrganization(
  db: Database,
  scopes: ApiKeyScope[] = ['ingest', 'read', 'write'],
): Promise<{ orgId: string; key: string; keyId: string }> {
  const org = await createOrgStore(db).createOrganization(`test-${randomBytes(6).toString('hex')}`);
  const created = await createApiKeyStore(db).createKey({ orgId: org.id, name: 'test', scopes });
  return { orgId: org.id, key: created.key, keyId: created.record.id };
}

/** Another key of an existing organization, with other scopes. */
export async function addKey(db: Database, orgId: string, scopes: ApiKeyScope[]): Promise<string> {
  return (await createApiKeyStore(db).createKey({ orgId, name: 'test', scopes })).key;
}

/**
 * Fires an alert of the organization's rule on `host` as the evaluator would (the API has no
 * route for it): started two minutes ago, fired one minute ago, at value 97. For a host that
 * sends no samples, a running evaluator leaves it alone.
 */
export async function fireTestAlert(
  db: Database,
  input: { orgId: string; ruleId: string; host: string },
): Promise<Alert> {
  const result = await db.sql.begin((tx) =>
    fireAlert(tx, {
      ...input,
      value: 97,
      startedAt: new Date(Date.now() - 120_000),
      firedAt: new Date(Date.now() - 60_000),
    }),
  );
  if (result.outcome !== 'fired') throw new Error(`fireAlert: ${result.outcome}`);
  return result.alert;
}
