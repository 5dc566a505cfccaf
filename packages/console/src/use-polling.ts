import { useEffect, useRef } from 'preact/hooks';

/**
 * Runs `load` now and again `intervalMs` after each run settles (never two at once), while the
 * tab is visible; restarts when `key` changes. `load` gets whether this is the first run. A
 * function `intervalMs` is asked after each run (a view may poll a large list less often).
 */
export function usePolling(
  load: (first: boolean, signal: { cancelled: boolean }) => Promise<void>,
  intervalMs: number | (() => number),
  key: string,
): void {
  const latest = useRef(load);
  latest.current = load;
  const interval = useRef(intervalMs);
  interval.current = intervalMs;
  const nextDelay = () =>
    typeof interval.current === 'number' ? interval.current : interval.current();
  useEffect(() => {
    const signal = { cancelled: false };
    let timer: ReturnType<typeof setTimeout> | undefined;
    let first = true;
    const run = async () => {
      if (document.hidden && !first) {
        timer = setTimeout(() => void run(), nextDelay());
        return;
      }
      try {
        await latest.current(first, signal);
      } catch {
        // the view shows its own error; polling goes on
      }
      first = false;
      if (!signal.cancelled) timer = setTimeout(() => void run(), nextDelay());
    };
    void run();
    return () => {
      signal.cancelled = true;
      if (timer !== undefined) clearTimeout(timer);
    };
  }, [key]);
}
