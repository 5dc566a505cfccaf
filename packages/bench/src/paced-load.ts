import { setTimeout as sleep } from 'node:timers/promises';
import type { BodySource } from './fleet.js';

export type PacedLoadResult = {
  /** Requests sent. */
  sent: number;
  /** Requests answered 200. */
  ok: number;
  /** Sum of `events_accepted` over the 200s: the samples the gateway acknowledged. */
  samplesAccepted: number;
  /** Answers other than 200 and failed requests, by status or error name. */
  failures: Record<string, number>;
  /** Ticks at which every slot was still busy, so no request went out (the load fell behind). */
  skipped: number;
};

/**
 * An open-loop load: one POST every 1/`requestsPerSecond` s until `shouldStop()`, whatever the
 * answers (a stalled pipeline does not slow the agents down), with at most `bodies`' slots in
 * flight. Unlike `runLoad`, it does not saturate the machine: a failover is measured under a
 * steady load, not at the ceiling.
 */
export async function runPacedLoad(options: {
  url: string;
  headers: Readonly<Record<string, string>>;
  bodies: BodySource;
  slots: number;
  requestsPerSecond: number;
  shouldStop: () => boolean;
}): Promise<PacedLoadResult> {
  const { bodies, slots } = options;
  const intervalMs = 1_000 / options.requestsPerSecond;
  const result: PacedLoadResult = { sent: 0, ok: 0, samplesAccepted: 0, failures: {}, skipped: 0 };
  const free = Array.from({ length: slots }, (_, slot) => slot);
  const inFlight = new Set<Promise<void>>();
  const count = (key: string): void => {
    result.failures[key] = (result.failures[key] ?? 0) + 1;
  };
  const send = async (slot: number): Promise<void> => {
    try {
      const response = await fetch(options.url, {
        method: 'POST',
        headers: options.headers,
        body: bodies.next(slot),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await response.text();
      if (response.status !== 200) return count(String(response.status));
      result.ok += 1;
      result.samplesAccepted += (JSON.parse(text) as { events_accepted: number }).events_accepted;
    } catch (err) {
      count(err instanceof Error ? err.name : 'error');
    } finally {
      free.push(slot);
    }
  };
  const startedAt = performance.now();
  for (let tick = 0; !options.shouldStop(); tick++) {
    const slot = free.pop();
    if (slot === undefined) result.skipped += 1;
    else {
      result.sent += 1;
      const request = send(slot).finally(() => inFlight.delete(request));
      inFlight.add(request);
    }
    await sleep(Math.max(0, startedAt + (tick + 1) * intervalMs - performance.now()));
  }
  await Promise.all(inFlight);
  return result;
}
