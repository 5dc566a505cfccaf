import type { HostSnapshot, TimeRange } from './incident-input.js';

type ContainerEventType =
  | 'container_appeared'
  | 'container_disappeared'
  | 'container_image_changed'
  | 'container_restarted'
  | 'container_status_changed';

/** A change of one container between two consecutive snapshots. */
export type ContainerEvent = {
  type: ContainerEventType;
  atMs: number;
  container: string;
  image: string | undefined;
  previousImage?: string;
  status?: string;
  previousStatus?: string;
};

type StatusClass = 'running' | 'restarting' | 'stopped' | 'other';

/** Docker's status words (`running`, `Up 2 hours`, `Restarting (1) …`, `Exited (137) …`). */
function classify(status: string | undefined): StatusClass {
  const s = (status ?? 'running').trim().toLowerCase();
  if (s === 'running' || s.startsWith('up')) return 'running';
  if (s.startsWith('restarting')) return 'restarting';
  if (s.startsWith('exited') || s === 'dead' || s.startsWith('stopped')) return 'stopped';
  return 'other';
}

const unitSeconds: Record<string, number> = {
  second: 1,
  minute: 60,
  hour: 3600,
  day: 86_400,
  week: 604_800,
};

/** Seconds of uptime in `Up 5 minutes` / `Up About an hour` / `Up Less than a second`. */
function uptimeSeconds(status: string | undefined): number | undefined {
  const match = /^up\s+(?:(\d+)|about an?|less than an?)\s+(second|minute|hour|day|week)s?/i.exec(
    (status ?? '').trim(),
  );
  if (match === null) return undefined;
  const unit = unitSeconds[(match[2] ?? '').toLowerCase()] ?? 0;
  return (match[1] === undefined ? 1 : Number(match[1])) * unit;
}

type State = { image: string | undefined; status: string | undefined };

/**
 * The containers' appearances, disappearances, image changes (deploys), restarts and status
 * changes over `range`, in time order. A restart is a move into `restarting`, a stopped
 * container running again, or an uptime (`Up 5 seconds`) that dropped.
 */
export function containerEvents(
  snapshots: readonly HostSnapshot[],
  range: TimeRange,
): ContainerEvent[] {
  const events: ContainerEvent[] = [];
  let previous: Map<string, State> | undefined;
  for (const snapshot of snapshots) {
    if (snapshot.timeMs < range.fromMs || snapshot.timeMs > range.toMs) continue;
    const current = new Map<string, State>();
    for (const c of snapshot.containers) {
      current.set(c.name, { image: c.image, status: c.status });
    }
    if (previous !== undefined) {
      const at = snapshot.timeMs;
      for (const [name, now] of current) {
        const before = previous.get(name);
        if (before === undefined) {
          events.push({ type: 'container_appeared', atMs: at, container: name, image: now.image });
          continue;
        }
        const imageChanged =
          before.image !== undefined && now.image !== undefined && before.image !== now.image;
        if (imageChanged) {
          events.push({
            type: 'container_image_changed',
            atMs: at,
            container: name,
            image: now.image,
            previousImage: before.image,
          });
        }
        // A deploy restarts the container with the new image: one event, the image change.
        const type = imageChanged ? undefined : statusChange(before, now);
        if (type !== undefined) {
          events.push({
            type,
            atMs: at,
            container: name,
            image: now.image,
            ...(now.status === undefined ? {} : { status: now.status }),
            ...(before.status === undefined ? {} : { previousStatus: before.status }),
          });
        }
      }
      for (const [name, before] of previous) {
        if (!current.has(name)) {
          events.push({
            type: 'container_disappeared',
            atMs: at,
            container: name,
            image: before.image,
          });
        }
      }
    }
    previous = current;
  }
  return events;
}

function statusChange(before: State, now: State): ContainerEventType | undefined {
  const from = classify(before.status);
  const to = classify(now.status);
  if (from !== to) {
    if (to === 'restarting' || (from === 'stopped' && to === 'running')) {
      return 'container_restarted';
    }
    return 'container_status_changed';
  }
  if (to !== 'running') return undefined;
  const upBefore = uptimeSeconds(before.status);
  const upNow = uptimeSeconds(now.status);
  if (upBefore === undefined || upNow === undefined) return undefined;
  // Uptime only grows while a container runs; docker rounds it ("Up 2 hours"), so only a clear
  // drop counts as a restart.
  return upNow + 60 < upBefore * 0.5 ? 'container_restarted' : undefined;
}

/** A container whose uptime in the first snapshot seen puts its start shortly before it. */
export type RecentStart = {
  container: string;
  image: string | undefined;
  /** Its status in that snapshot, e.g. `Up 6 minutes`. */
  status: string;
  seenAtMs: number;
  /** `seenAtMs` minus the uptime: docker rounds the uptime, so this is to about a unit. */
  startedAtMs: number;
  /** The longest-running other container, which shows the host itself is not new. */
  elder: { container: string; status: string; startedAtMs: number };
};

/**
 * Containers that `first` (the first snapshot seen of a host) shows started at or after
 * `sinceMs` (`Up 6 minutes`): a deploy or restart just before the host was first seen. Only on a
 * host where another container had been up for `elderMs` or more by then; on a freshly booted
 * host every container is recent, which says nothing.
 */
export function recentStarts(first: HostSnapshot, sinceMs: number, elderMs: number): RecentStart[] {
  const started = first.containers
    .map((c) => ({ c, uptime: uptimeSeconds(c.status) }))
    .filter(
      (u): u is { c: (typeof first.containers)[number]; uptime: number } => u.uptime !== undefined,
    )
    .map(({ c, uptime }) => ({ c, startedAtMs: first.timeMs - uptime * 1000 }));
  const elder = [...started].sort((a, b) => a.startedAtMs - b.startedAtMs)[0];
  if (elder === undefined || first.timeMs - elder.startedAtMs < elderMs) return [];
  return started
    .filter(({ c, startedAtMs }) => c !== elder.c && startedAtMs >= sinceMs)
    .map(({ c, startedAtMs }) => ({
      container: c.name,
      image: c.image,
      status: c.status ?? '',
      seenAtMs: first.timeMs,
      startedAtMs,
      elder: {
        container: elder.c.name,
        status: elder.c.status ?? '',
        startedAtMs: elder.startedAtMs,
      },
    }));
}
