/**
 * Polls `find` every 100 ms until it returns a value; after `timeoutMs` throws with the agent's
 * log tail, which is what explains a sender that never sent. For the agent launchers' tests.
 */
export async function waitForAgent<T>(
  find: () => T | undefined,
  options: { timeoutMs: number; what: string; log: (lines?: number) => string },
): Promise<T> {
  const deadline = Date.now() + options.timeoutMs;
  for (;;) {
    const found = find();
    if (found !== undefined) return found;
    if (Date.now() > deadline) {
      throw new Error(`no ${options.what} within ${options.timeoutMs} ms; log:\n${options.log()}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
