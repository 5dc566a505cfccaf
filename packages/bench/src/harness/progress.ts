/** A progress line on stderr, so stdout carries only the report. */
export function logProgress(message: string): void {
  process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${message}\n`);
}

/** An error's message, for a progress line or a note. */
export function describeError(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
