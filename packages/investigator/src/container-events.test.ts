import type { Container } from '@monitor/schemas';
import { describe, expect, it } from 'vitest';
import { containerEvents } from './container-events.js';

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
