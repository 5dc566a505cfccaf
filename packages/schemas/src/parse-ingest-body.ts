import { z } from 'zod';
import { readCanonicalIngestBody } from './canonical-ingest.js';
import type { IngestPayload } from './ingest.js';
import { ingestLimits, ingestPayloadSchema } from './ingest.js';

export type IngestBodyResult =
  { success: true; data: IngestPayload[] } | { success: false; error: z.ZodError };

const ingestBatchSchema = z
  .array(ingestPayloadSchema)
  .min(1)
  .max(ingestLimits.maxPayloadsPerRequest);

/**
 * Parses an ingest body (a parsed JSON value): the hand check of the usual shape first, zod for
 * anything else, so every refusal and every unusual body is zod's.
 */
export function parseIngestBody(value: unknown): IngestBodyResult {
  const canonical = readCanonicalIngestBody(value);
  return canonical === undefined
    ? parseIngestBodyWithZod(value)
    : { success: true, data: canonical };
}

/**
 * zod alone, the authority the hand check is held to. It chooses the schema by shape first so
 * that errors name the failing path (`[3].metrics.cpu`) instead of the union's "no alternative
 * matched".
 */
export function parseIngestBodyWithZod(value: unknown): IngestBodyResult {
  if (Array.isArray(value)) return ingestBatchSchema.safeParse(value);
  const single = ingestPayloadSchema.safeParse(value);
  return single.success
    ? { success: true, data: [single.data] }
    : { success: false, error: single.error };
}
