import type { MessagePort, ResourceLimits } from 'node:worker_threads';
import { MessageChannel, Worker } from 'node:worker_threads';
import type { Publisher } from '@monitor/bus';
import { createPortPublisher } from '@monitor/bus';
import type { AllConfig } from '../config.js';
import type { RoleContext } from '../role-context.js';
import { consumersResourceLimits } from './all-heap.js';
import type {
  ConsumersReply,
  ConsumersRequest,
  ConsumersWorkerData,
} from './consumers-thread-messages.js';

/** The consumers of role `all` on their own thread, as the main thread sees them. */
export type ConsumersThread = {
  /** With the in-process bus: publishes to it, resolving once the samples are stored and evaluated. */
  publisher: Publisher | undefined;
  /** Whether the thread's database and bus answer (a readiness check). */
  check(): Promise<boolean>;
};

const checkTimeoutMs = 5_000;

/**
 * Starts `consumers-worker` and resolves once it consumes. The thread's metrics join the
 * process's `/metrics`; shutdown stops it after the HTTP server and the publisher (so in-flight
 * ingests are answered) and before the database. If the thread dies, the process shuts down:
 * nothing would store what the gateway takes.
 */
export async function startConsumersThread(
  ctx: RoleContext,
  config: AllConfig,
  databaseUrl: string,
): Promise<ConsumersThread> {
  const inProcessBus = config.KAFKA_BROKERS === undefined;
  const channel = inProcessBus ? new MessageChannel() : undefined;
  const data: ConsumersWorkerData = {
    config,
    databaseUrl,
    ...(channel ? { publishPort: channel.port2 } : {}),
  };
  const worker = startWorker(data, channel ? [channel.port2] : [], consumersResourceLimits(config));

  const waiting = new Map<number, (reply: ConsumersReply) => void>();
  let nextId = 0;
  const ask = (request: (id: number) => ConsumersRequest): Promise<ConsumersReply> => {
    const id = nextId++;
    return new Promise((resolve) => {
      waiting.set(id, resolve);
      worker.postMessage(request(id));
    });
  };
  let stopping = false;
  let exited = false;
  let stopped: ((ok: boolean) => void) | undefined;
  const ready = new Promise<void>((resolve, reject) => {
    worker.on('message', (reply: ConsumersReply) => {
      if (reply.type === 'ready') resolve();
      else if (reply.type === 'failed') reject(new Error(`consumers thread: ${reply.message}`));
      else if (reply.type === 'stopped') stopped?.(reply.ok);
      else {
        waiting.get(reply.id)?.(reply);
        waiting.delete(reply.id);
      }
    });
    worker.on('error', (err) => {
      ctx.logger.fatal({ err }, 'consumers thread crashed');
      reject(err);
    });
    worker.on('exit', (code) => {
      exited = true;
      reject(new Error(`consumers thread exited with ${code} before it was ready`));
      if (stopping) return;
      ctx.logger.fatal({ code }, 'consumers thread exited; stopping the process');
      void ctx.shutdown.shutdown('consumers thread exited');
    });
  });

  ctx.shutdown.onShutdown('consumers thread', async () => {
    stopping = true;
    if (exited) return;
    const ok = await new Promise<boolean>((resolve) => {
      stopped = resolve;
      worker.once('exit', () => resolve(false));
      worker.postMessage({ type: 'stop' } satisfies ConsumersRequest);
    });
    await worker.terminate();
    if (!ok) throw new Error('the consumers thread did not stop cleanly (see its log lines)');
  });
  await ready;

  ctx.metrics.exposeAlso(async () => {
    const reply = await ask((id) => ({ type: 'metrics', id }));
    return reply.type === 'metrics' ? reply.metrics : [];
  });
  const publisher = channel ? createPortPublisher(channel.port1) : undefined;
  if (publisher) ctx.shutdown.onShutdown('ingest publisher', () => publisher.close());
  return {
    publisher,
    async check() {
      let timer: NodeJS.Timeout | undefined;
      const timeout = new Promise<false>((resolve) => {
        timer = setTimeout(() => resolve(false), checkTimeoutMs);
      });
      const answer = ask((id) => ({ type: 'check', id })).then(
        (reply) => reply.type === 'check' && reply.ok,
      );
      try {
        return await Promise.race([answer, timeout]);
      } finally {
        clearTimeout(timer);
      }
    },
  };
}

/**
 * The worker from the build, or from the sources when this runs through tsx (`npm start`, the
 * tests): Node 20 does not run a worker's `--import` hooks, so the thread registers tsx itself.
 */
function startWorker(
  data: ConsumersWorkerData,
  transferList: MessagePort[],
  resourceLimits: ResourceLimits,
): Worker {
  const options = { workerData: data, transferList, name: 'consumers', resourceLimits };
  if (!import.meta.url.endsWith('.ts')) {
    return new Worker(new URL('./consumers-worker.js', import.meta.url), options);
  }
  const entry = new URL('./consumers-worker.ts', import.meta.url).href;
  const bootstrap = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(entry)}); })`;
  return new Worker(bootstrap, { ...options, eval: true });
}
