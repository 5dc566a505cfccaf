import { setFlagsFromString } from 'node:v8';
import type { ResourceLimits } from 'node:worker_threads';
import type { AllConfig } from '../config.js';

type HeapConfig = Pick<AllConfig, 'HEAP_GROWING_PERCENT' | 'CONSUMERS_SEMI_SPACE_MB'>;

/**
 * Role `all`'s memory settings for both of its threads, applied before the consumers thread
 * starts. V8 lets the old generation grow to a multiple (up to 4 ×) of what survived its last
 * full collection before collecting again; under ingest both threads promote most of what they
 * parse and decode, so each peaked near 100 MiB of old space over a live set of 25–30 MiB.
 * `--heap-growing-percent` caps that multiple: V8 reads it at every full collection, for every
 * isolate of the process, so setting it here covers both threads and leaves the other roles'
 * process flags alone.
 */
export function applyAllHeapSettings(config: HeapConfig): void {
  setFlagsFromString(`--heap-growing-percent=${config.HEAP_GROWING_PERCENT}`);
}

/**
 * The consumers thread's heap limits. V8 applies `--max-semi-space-size` (the main thread's, from
 * the process's flags) to every isolate it creates, over a worker's own `resourceLimits`: the
 * flag is unset here, before the thread's isolate exists, and the main isolate keeps the young
 * generation it was created with. V8 sizes a young generation as three semi-spaces (the two
 * semi-spaces and its large-object space).
 */
export function consumersResourceLimits(config: HeapConfig): ResourceLimits {
  setFlagsFromString('--max-semi-space-size=0');
  return { maxYoungGenerationSizeMb: 3 * config.CONSUMERS_SEMI_SPACE_MB };
}
