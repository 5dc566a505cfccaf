/** Exponential backoff: `initialMs` doubled per earlier attempt (attempt 1 waits `initialMs`), ±20 % jitter, capped. */
export function backoffMs(attempt: number, initialMs: number, maxMs: number): number {
  const base = Math.min(maxMs, initialMs * 2 ** Math.max(0, attempt - 1));
  const jitter = base * 0.2 * (Math.random() * 2 - 1);
  return Math.max(0, Math.min(maxMs, Math.round(base + jitter)));
}

export function delay(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
