export type {
  BatchContext,
  Bus,
  BusMessage,
  ConsumedRecord,
  DeadLetterSink,
  Publisher,
  RecordBatch,
  Subscription,
} from './bus.js';

export { deadLetterTopic } from './dead-letter-sink.js';
export { createInProcessBus } from './in-process-bus.js';
export { createKafkaBus } from './kafka-bus.js';
export { partitionForKey } from './murmur2.js';
