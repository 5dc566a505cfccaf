import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { GroupMemberOf, TopicPartition } from './process-balanced-assigner.js';
import { assignByProcess } from './process-balanced-assigner.js';

const spread = (counts: number[]): number => Math.max(...counts) - Math.min(...counts);

/** Members of `processes` processes, each with 1 to 4 consumers. */
const groups = fc
  .array(fc.integer({ min: 1, max: 4 }), { minLength: 1, maxLength: 6 })
  .map((consumers): GroupMemberOf[] =>
    consumers.flatMap((count, process) =>
      Array.from({ length: count }, (_, i) => ({
        memberId: `writer-${process}-${i}`,
        processKey: `process-${process}`,
      })),
    ),
  );

const partitionsOf = (topics: number[]): TopicPartition[] =>
  topics.flatMap((count, t) =>
    Array.from({ length: count }, (_, partition) => ({ topic: `topic-${t}`, partition })),
  );

describe('assignByProcess', () => {
  it('gives every partition to one member, processes and their members evened out', () => {
    fc.assert(
      fc.property(
        groups,
        fc.array(fc.integer({ min: 1, max: 24 }), { minLength: 1, maxLength: 3 }),
        (members, topics) => {
          const partitions = partitionsOf(topics);
          const assigned = assignByProcess(members, partitions);
          const all = [...assigned.values()].flat();
          expect(all).toHaveLength(partitions.length);
          expect(new Set(all.map((p) => `${p.topic}/${p.partition}`)).size).toBe(partitions.length);
          const processes = [...new Set(members.map((m) => m.processKey))];
          const perProcess = processes.map((key) =>
            members
              .filter((m) => m.processKey === key)
              .map((m) => assigned.get(m.memberId)?.length ?? 0),
          );
          expect(spread(perProcess.map((counts) => counts.reduce((a, b) => a + b, 0)))).toBe(
            Math.min(1, partitions.length % processes.length),
          );
          for (const counts of perProcess) expect(spread(counts)).toBeLessThanOrEqual(1);
        },
      ),
    );
  });

  it('does not depend on the order members are listed in', () => {
    fc.assert(
      fc.property(groups, fc.integer({ min: 1, max: 24 }), (members, count) => {
        const partitions = partitionsOf([count]);
        const reversed = assignByProcess([...members].reverse(), [...partitions].reverse());
        expect(Object.fromEntries(reversed)).toEqual(
          Object.fromEntries(assignByProcess(members, partitions)),
        );
      }),
    );
  });

  it('gives two writers of three consumers three partitions each, one per consumer', () => {
    const members = ['a', 'b'].flatMap((process) =>
      [0, 1, 2].map((i) => ({ memberId: `${process}${i}`, processKey: process })),
    );
    const assigned = assignByProcess(members, partitionsOf([6]));
    for (const member of members) expect(assigned.get(member.memberId)).toHaveLength(1);
    const ofA = ['a0', 'a1', 'a2'].flatMap((id) => assigned.get(id) ?? []);
    expect(ofA.map((p) => p.partition).sort()).toEqual([0, 2, 4]);
  });
});
