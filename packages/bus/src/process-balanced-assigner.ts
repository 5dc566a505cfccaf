import type { PartitionAssigner } from 'kafkajs';
import kafkajs from 'kafkajs';

const { AssignerProtocol } = kafkajs;

/** A member of a consumer group, with the process it runs in. */
export type GroupMemberOf = { memberId: string; processKey: string };

export type TopicPartition = { topic: string; partition: number };

/**
 * Partitions spread over processes first, then over each process's members: every process gets
 * as many partitions as any other, give or take one, and within a process every member too.
 * kafkajs' round-robin assigner deals partitions over members alone, so processes that run
 * several consumers of a group (the writer's `WRITER_CONSUMERS`) could get none while another
 * got several: adding a replica would not always add a process that works. Deterministic: the
 * same members and partitions give the same assignment, whoever leads the group.
 */
export function assignByProcess(
  members: readonly GroupMemberOf[],
  partitions: readonly TopicPartition[],
): Map<string, TopicPartition[]> {
  const assignment = new Map<string, TopicPartition[]>();
  for (const { memberId } of members) assignment.set(memberId, []);
  const byProcess = new Map<string, string[]>();
  for (const { memberId, processKey } of members) {
    const list = byProcess.get(processKey);
    if (list === undefined) byProcess.set(processKey, [memberId]);
    else list.push(memberId);
  }
  const processes = [...byProcess.keys()].sort();
  for (const list of byProcess.values()) list.sort();
  if (processes.length === 0) return assignment;
  const sorted = [...partitions].sort((a, b) =>
    a.topic === b.topic ? a.partition - b.partition : a.topic < b.topic ? -1 : 1,
  );
  // Partition i goes to process i mod P, as that process's (i div P)-th, hence to that
  // number's member of it, modulo its members.
  sorted.forEach((topicPartition, i) => {
    const processMembers = byProcess.get(processes[i % processes.length] as string) as string[];
    const nth = Math.floor(i / processes.length);
    assignment.get(processMembers[nth % processMembers.length] as string)?.push(topicPartition);
  });
  return assignment;
}

/** The assigner's name in the group protocol. */
const processBalancedAssignerName = 'ProcessBalancedAssigner';

/**
 * kafkajs' assigner for `assignByProcess`: each member sends its process key as the metadata's
 * user data. A member whose metadata carries none counts as a process of its own.
 */
export function processBalancedAssigner(processKey: string): PartitionAssigner {
  return ({ cluster }) => ({
    name: processBalancedAssignerName,
    version: 0,
    assign({ members, topics }) {
      const groupMembers = members.map(({ memberId, memberMetadata }) => {
        const { userData } = AssignerProtocol.MemberMetadata.decode(memberMetadata) ?? {};
        const key = userData !== undefined && userData.length > 0 ? userData.toString() : '';
        return { memberId, processKey: key === '' ? `member:${memberId}` : `process:${key}` };
      });
      const partitions = topics.flatMap((topic) =>
        cluster
          .findTopicPartitionMetadata(topic)
          .map(({ partitionId }) => ({ topic, partition: partitionId })),
      );
      const assigned = assignByProcess(groupMembers, partitions);
      return Promise.resolve(
        [...assigned].map(([memberId, list]) => {
          const byTopic: Record<string, number[]> = {};
          for (const { topic, partition } of list) (byTopic[topic] ??= []).push(partition);
          return {
            memberId,
            memberAssignment: AssignerProtocol.MemberAssignment.encode({
              version: 0,
              assignment: byTopic,
              userData: Buffer.alloc(0),
            }),
          };
        }),
      );
    },
    protocol({ topics }) {
      return {
        name: processBalancedAssignerName,
        metadata: AssignerProtocol.MemberMetadata.encode({
          version: 0,
          topics,
          userData: Buffer.from(processKey),
        }),
      };
    },
  });
}
