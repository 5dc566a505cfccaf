import type { ConsumedRecord, DeadLetterSink, Publisher } from './bus.js';

/** The headers a dead letter carries besides the original record's own. */
export const deadLetterHeaders = {
  reason: 'x-dlq-reason',
  sourceTopic: 'x-dlq-source-topic',
  sourcePartition: 'x-dlq-source-partition',
  sourceOffset: 'x-dlq-source-offset',
} as const;

/** Reasons longer than this are cut (with an ellipsis): a header is no place for a stack dump. */
const maxDeadLetterReasonLength = 1_000;

/** The dead-letter topic of `topic`. Create it with the same retention needs as the source. */
export function deadLetterTopic(topic: string): string {
  return `${topic}.dlq`;
}

export type DeadLetterSinkDeps = {
  publisher: Publisher;
};

/**
 * A `DeadLetterSink` over any `Publisher`: the record goes to `<topic>.dlq` with its original
 * key (a null key becomes ""), value (a null value becomes empty) and headers, plus the
 * `x-dlq-*` headers. Concurrent `send` calls share one produce request on a batching publisher,
 * so dead-lettering many records is best done with `Promise.all`.
 */
export function createDeadLetterSink(deps: DeadLetterSinkDeps): DeadLetterSink {
  return {
    send(record: ConsumedRecord, reason: string): Promise<void> {
      const cut =
        reason.length > maxDeadLetterReasonLength
          ? `${reason.slice(0, maxDeadLetterReasonLength - 1)}…`
          : reason;
      return deps.publisher.publish(deadLetterTopic(record.topic), [
        {
          key: record.key ?? '',
          value: record.value ?? Buffer.alloc(0),
          headers: {
            ...record.headers,
            [deadLetterHeaders.reason]: cut,
            [deadLetterHeaders.sourceTopic]: record.topic,
            [deadLetterHeaders.sourcePartition]: String(record.partition),
            [deadLetterHeaders.sourceOffset]: record.offset,
          },
        },
      ]);
    },
  };
}
