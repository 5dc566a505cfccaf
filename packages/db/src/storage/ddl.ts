import type { TransactionSql } from '../core/database.js';

/** A name as a quoted SQL identifier. */
export function identifier(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** Runs static DDL statements one by one (clearer errors than one multi-statement string). */
export async function run(sql: TransactionSql, statements: readonly string[]): Promise<void> {
  for (const statement of statements) await sql.unsafe(statement);
}
