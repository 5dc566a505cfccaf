import type { Container } from '@monitor/schemas';
import { describe, expect, it } from 'vitest';
import { containerEvents, recentStarts } from './container-events.js';

const minuteMs = 60_000;
const snapshots = (...states: Container[][]) =>
  states.map((containers, i) => ({ timeMs: i * minuteMs, containers, processes: [] }));
const all = { fromMs: 0, toMs: 100 * minuteMs };

describe('containerEvents', () => {
  it('reports an image change once, without a restart for the same deploy', () => {
    const events = containerEvents(
      snapshots(
        [{ name: 'api', image: 'api:1', status: 'Up 3 hours' }],
        [{ name: 'api', image: 'api:2', status: 'Up 10 seconds' }],
      ),
      all,
    );
    expect(events).toEqual([
      {
        type: 'container_image_changed',
        atMs: minuteMs,
        container: 'api',
        image: 'api:2',
        previousImage: 'api:1',
      },
    ]);
  });

  it('counts moves into restarting and back from exited as restarts', () => {
    const events = containerEvents(
      snapshots(
        [{ name: 'pay', status: 'running' }],
        [{ name: 'pay', status: 'Restarting (1) 2 seconds ago' }],
        [{ name: 'pay', status: 'running' }],
        [{ name: 'pay', status: 'Exited (137) 1 second ago' }],
        [{ name: 'pay', status: 'Up 3 seconds' }],
      ),
      all,
    );
    expect(events.map((e) => [e.type, e.atMs / minuteMs])).toEqual([
      ['container_restarted', 1],
      ['container_status_changed', 2],
      ['container_status_changed', 3],
      ['container_restarted', 4],
    ]);
  });

  it('sees a restart between two snapshots in a dropped uptime', () => {
    const events = containerEvents(
      snapshots([{ name: 'db', status: 'Up 2 hours' }], [{ name: 'db', status: 'Up 5 seconds' }]),
      all,
    );
    expect(events.map((e) => e.type)).toEqual(['container_restarted']);
  });

  it('reports containers that appear and disappear, only inside the range', () => {
    const events = containerEvents(
      snapshots([{ name: 'a' }], [{ name: 'a' }, { name: 'b', image: 'b:1' }], [{ name: 'b' }], []),
      { fromMs: 0, toMs: 2 * minuteMs },
    );
    expect(events.map((e) => [e.type, e.container])).toEqual([
      ['container_appeared', 'b'],
      ['container_disappeared', 'a'],
    ]);
  });
});

describe('recentStarts', () => {
  const at = 120 * minuteMs;
  const first = (...containers: Container[]) => ({ timeMs: at, containers, processes: [] });

  it('dates a container started minutes before on a host whose others run for long', () => {
    const starts = recentStarts(
      first(
        { name: 'redis', image: 'redis:7', status: 'Up 3 days' },
        { name: 'api', image: 'api:2', status: 'Up 6 minutes' },
        { name: 'web', status: 'running' },
      ),
      at - 30 * minuteMs,
      60 * minuteMs,
    );
    expect(starts).toEqual([
      {
        container: 'api',
        image: 'api:2',
        status: 'Up 6 minutes',
        seenAtMs: at,
        startedAtMs: at - 6 * minuteMs,
        elder: { container: 'redis', status: 'Up 3 days', startedAtMs: at - 3 * 86_400_000 },
      },
    ]);
  });

  it('says nothing on a freshly booted host or about starts before the window', () => {
    const fresh = first(
      { name: 'redis', status: 'Up 8 minutes' },
      { name: 'api', status: 'Up 6 minutes' },
    );
    expect(recentStarts(fresh, at - 30 * minuteMs, 60 * minuteMs)).toEqual([]);
    const old = first(
      { name: 'redis', status: 'Up 3 days' },
      { name: 'api', status: 'Up 2 hours' },
    );
    expect(recentStarts(old, at - 30 * minuteMs, 60 * minuteMs)).toEqual([]);
  });
});
