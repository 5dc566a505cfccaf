import { useEffect, useRef } from 'preact/hooks';

/**
 * Runs `load` now and again `intervalMs` after each run settles (never two at once), while the
 * tab is visible; restarts when `key` changes. `load` gets whether this is the first run.
 */
export function usePolling(
  load: (first: boolean, signal: { cancelled: boolean }) => Promise<void>,
  intervalMs: number,
  key: string,
): void {
  const latest = useRef(load);
  latest.current = load;
  useEffect(() => {
    const signal = { cancelled: false };
    let timer: ReturnType<typeof setTimeout> | undefined;
    let first = true;
    const run = async () => {
      if (document.hidden && !first) {
        timer = setTimeout(() => void run(), intervalMs);
        return;
      }
      try {
        await latest.current(first, signal);
      } catch {
        // the view shows its own error; polling goes on
      }
      first = false;
      if (!signal.cancelled) timer = setTimeout(() => void run(), intervalMs);
    };
    void run();
    return () => {
      signal.cancelled = true;
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [key, intervalMs]);
}
