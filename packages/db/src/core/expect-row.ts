/** The first row of a statement that always returns one (INSERT … RETURNING, an aggregate). */
export function expectRow<T>(rows: readonly T[], what: string): T {
  const row = rows[0];
  if (row === undefined) throw new Error(`${what} returned no row`);
  return row;
}
