import { randomBytes } from 'node:crypto';
import postgres from 'postgres';

export type TestDatabase = {
  /** URL of the new, empty database. */
  url: string;
  name: string;
  /** Drops the database, ending any connection still open to it. */
  drop(): Promise<void>;
};

/**
 * A fresh empty database on the server of `serverUrl`, so each integration suite starts clean
 * and never sees another's rows. Not for the TimescaleDB test engine (one database only).
 */
export async function createTestDatabase(
  serverUrl: string,
  prefix = 'test',
): Promise<TestDatabase> {
  const name = `${prefix}_${randomBytes(6).toString('hex')}`;
  const admin = postgres(serverUrl, { max: 1, onnotice: () => undefined });
  try {
    await admin.unsafe(`create database "${name}"`);
  } finally {
    await admin.end();
  }
  const url = new URL(serverUrl);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    name,
    async drop() {
      const sql = postgres(serverUrl, { max: 1, onnotice: () => undefined });
      try {
        await sql.unsafe(`drop database if exists "${name}" with (force)`);
      } finally {
        await sql.end();
      }
    },
  };
}
