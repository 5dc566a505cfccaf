export type {
  BatchContext,
  Bus,
  BusMessage,
  ConsumedRecord,
  DeadLetterSink,
  Publisher,
  PublisherOptions,
  RecordBatch,
  Subscription,
} from './bus.js';

export { createConsumerBatchPolicy } from './consumer-batch-policy.js';
export { deadLetterTopic } from './dead-letter-sink.js';
export { createInProcessBus } from './in-process-bus.js';
export { createKafkaBus } from './kafka-bus.js';
export { partitionForKey } from './murmur2.js';
export { createPortPublisher, servePublisher } from './port-publisher.js';
export { BusUnavailableError } from './bus-unavailable-error.js';
