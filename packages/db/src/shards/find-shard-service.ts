import type { Database } from '../core/database.js';

export type ShardServiceRow = { id: string; name: string; tags: Record<string, string> };

/**
 * The service on whichever shard holds it. With `skipCopies` (sample shards), a control
 * database's copy is no shard's service; one database has no copies (nor, before migration 41,
 * the column).
 */
export async function findShardService(
  shards: readonly Database[],
  orgId: string,
  id: string,
  skipCopies: boolean,
): Promise<{ service: ShardServiceRow; shard: Database } | undefined> {
  const found = await Promise.all(
    shards.map(async (shard) => {
      const [service] = await shard.sql<ShardServiceRow[]>`
        select id, name, tags from services
        where id = ${id} and org_id = ${orgId}
          ${skipCopies ? shard.sql`and not shard_copy` : shard.sql``}`;
      return service === undefined ? undefined : { service, shard };
    }),
  );
  return found.find((each) => each !== undefined);
}
