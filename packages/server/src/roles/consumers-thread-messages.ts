import type { MessagePort } from 'node:worker_threads';
import type { MetricObjectWithValues, MetricValue } from 'prom-client';
import type { AllConfig } from '../config.js';

/** What role `all` hands its consumers thread at start (structured-cloned, the port transferred). */
export type ConsumersWorkerData = {
  config: AllConfig;
  databaseUrl: string;
  /** The in-process bus's publishing port (`servePublisher`); absent with Kafka. */
  publishPort?: MessagePort;
};

/** Main thread → consumers thread. */
export type ConsumersRequest =
  { type: 'check'; id: number } | { type: 'metrics'; id: number } | { type: 'stop' };

/** Consumers thread → main thread. */
export type ConsumersReply =
  | { type: 'ready' }
  | { type: 'failed'; message: string }
  | { type: 'check'; id: number; ok: boolean }
  | { type: 'metrics'; id: number; metrics: MetricObjectWithValues<MetricValue<string>>[] }
  | { type: 'stopped'; ok: boolean };
