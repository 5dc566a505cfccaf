import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Service, ServiceStatus } from './api-types.js';
import { groupServices, tagKeys } from './host-map.js';

const statuses: ServiceStatus[] = ['healthy', 'warning', 'critical', 'stale'];
const service = fc.record({
  id: fc.uuid(),
  name: fc.string({ minLength: 1, maxLength: 12 }),
  status: fc.constantFrom(...statuses),
  last_seen: fc.constant('2026-11-23T12:00:00.000Z'),
  metrics: fc.constant({}),
  tags: fc.dictionary(fc.constantFrom('env', 'role', 'zone'), fc.constantFrom('a', 'b', 'c')),
});

describe('groupServices', () => {
  it('puts every service in exactly one group, whose counts add up, by the tag value', () => {
    fc.assert(
      fc.property(
        fc.array(service, { maxLength: 60 }),
        fc.constantFrom(undefined, 'env', 'role'),
        (services, key) => {
          const groups = groupServices(services, key);
          expect(groups.flatMap((group) => group.services.map((each) => each.id)).sort()).toEqual(
            services.map((each) => each.id).sort(),
          );
          for (const group of groups) {
            expect(Object.values(group.counts).reduce((a, b) => a + b, 0)).toBe(
              group.services.length,
            );
            for (const member of group.services) {
              expect(key === undefined ? undefined : member.tags[key]).toBe(group.value);
            }
          }
          expect(new Set(groups.map((group) => group.value)).size).toBe(groups.length);
        },
      ),
    );
  });

  it('names the worst status of a group and lists its worst members first', () => {
    const make = (name: string, status: ServiceStatus, env?: string): Service => ({
      id: name,
      name,
      status,
      last_seen: '2026-11-23T12:00:00.000Z',
      metrics: {},
      tags: env === undefined ? {} : { env },
    });
    const groups = groupServices(
      [
        make('a', 'healthy', 'prod'),
        make('b', 'warning', 'prod'),
        make('c', 'stale', 'prod'),
        make('d', 'healthy', 'dev'),
        make('e', 'critical'),
      ],
      'env',
    );
    expect(groups.map((group) => [group.value, group.worst])).toEqual([
      ['prod', 'warning'],
      ['dev', 'healthy'],
      [undefined, 'critical'],
    ]);
    expect(groups[0]!.services.map((each) => each.name)).toEqual(['b', 'c', 'a']);
    expect(tagKeys(groups.flatMap((group) => group.services))).toEqual(['env']);
  });
});
