export type {
  BatchContext,
  BatchHandler,
  Bus,
  BusAdmin,
  BusMessage,
  ConsumedRecord,
  DeadLetterSink,
  EnsureTopicOptions,
  EnsureTopicResult,
  Publisher,
  PublisherOptions,
  RecordBatch,
  SubscribeOptions,
  Subscription,
} from './bus.js';

export { silentBusLogger } from './bus-logger.js';
export type { BusLogger } from './bus-logger.js';

export {
  BusUnavailableError,
  defaultRetryAfterSeconds,
  isBusUnavailableError,
} from './bus-unavailable-error.js';
export type { BusUnavailableReason } from './bus-unavailable-error.js';

export {
  batchingPublisherDefaults,
  createBatchingPublisher,
  messageBytes,
} from './batching-publisher.js';
export type {
  BatchSender,
  BatchingPublisherDeps,
  BatchingPublisherOptions,
  TopicMessages,
} from './batching-publisher.js';

export {
  createDeadLetterSink,
  deadLetterHeaders,
  deadLetterTopic,
  maxDeadLetterReasonLength,
} from './dead-letter-sink.js';
export type { DeadLetterSinkDeps } from './dead-letter-sink.js';

export { createInProcessBus, inProcessBusDefaults } from './in-process-bus.js';
export type { InProcessBusOptions } from './in-process-bus.js';

export { createKafkaBus, kafkaBusDefaults } from './kafka-bus.js';
export type { KafkaBusDeps } from './kafka-bus.js';

export { kafkaSubscriptionDefaults } from './kafka-subscription.js';

export { murmur2, partitionForKey } from './murmur2.js';
