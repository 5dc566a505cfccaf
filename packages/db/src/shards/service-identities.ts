import { newId } from '@monitor/platform';
import type { Database } from '../core/database.js';

/** A service as the shard holding its samples knows it: what the control database copies. */
export type ServiceIdentity = { id: string; tags: Record<string, string> };

/**
 * The services of an organization's hosts on the shards that hold their samples, created there
 * (as the writer would, filled in by it later) when the evaluator is ahead of the writer. An
 * alert names its service by this id, so the services list, a service's detail and its alerts
 * agree whichever database answers.
 */
export type ServiceIdentities = (
  orgId: string,
  /** `seenAt`: the `last_seen` of a row created here (the alert's time, as without shards). */
  hosts: readonly { host: string; seenAt: Date }[],
) => Promise<Map<string, ServiceIdentity>>;

/** Resolves each host on `shardOf(orgId, host)`, one round trip per shard, shards at once. */
export function createServiceIdentities(
  shardOf: (orgId: string, host: string) => Database,
): ServiceIdentities {
  return async (orgId, hosts) => {
    const byShard = new Map<Database, Map<string, Date>>();
    for (const { host, seenAt } of hosts) {
      const shard = shardOf(orgId, host);
      const named = byShard.get(shard) ?? new Map<string, Date>();
      // A host's first time stands, as the first alert's insert would.
      if (!named.has(host)) named.set(host, seenAt);
      byShard.set(shard, named);
    }
    const found = await Promise.all(
      [...byShard].map(async ([{ sql }, named]) => {
        const names = [...named.keys()];
        await sql`
          insert into services (id, org_id, name, last_seen)
          select x.id, ${orgId}, x.name, x.last_seen
          from unnest(${names.map(() => newId('svc'))}::text[], ${names}::text[],
            ${[...named.values()].map((at) => at.toISOString())}::timestamptz[])
            as x(id, name, last_seen)
          on conflict (org_id, name) do nothing`;
        return await sql<{ id: string; name: string; tags: Record<string, string> }[]>`
          select id, name, tags from services
          where org_id = ${orgId} and name = any(${names}::text[])`;
      }),
    );
    return new Map(found.flat().map((row) => [row.name, { id: row.id, tags: row.tags }]));
  };
}
