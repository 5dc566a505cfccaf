import { expect } from 'vitest';
import { findApiRoute, toOpenApiPath } from '@monitor/api';
import type { ApiExchange } from '@monitor/testkit/builders';

type ServedDocument = {
  paths: Record<string, Record<string, { responses: Record<string, { content?: object }> }>>;
};

/**
 * Asserts that every exchange is documented in the served OpenAPI document and that its body
 * validates against the operation's schema, with nothing undocumented in it: the document cannot
 * drift from what the API really answers.
 */
export function expectExchangesDocumented(
  exchanges: readonly ApiExchange[],
  served: ServedDocument,
): void {
  for (const exchange of exchanges) {
    const where = `${exchange.method} ${exchange.path} → ${exchange.status}`;
    const operation = findApiRoute(exchange.method, exchange.path);
    if (operation === undefined) {
      expect(exchange.status, where).toBe(405); // another method on a documented path
      continue;
    }
    const spec = operation.responses[exchange.status];
    expect(spec, where).toBeDefined();
    if (spec!.contentType === 'none') {
      expect(exchange.body, where).toBeUndefined();
      continue;
    }
    expect(exchange.contentType.startsWith(spec!.contentType), where).toBe(true);
    const documented =
      served.paths[toOpenApiPath(operation.path)]?.[operation.method]?.responses[
        String(exchange.status)
      ]?.content;
    expect(documented, where).toHaveProperty([spec!.contentType]);
    const parsed = spec!.schema.safeParse(exchange.body);
    expect(parsed.error?.issues, where).toBeUndefined();
    // Nothing undocumented either: parsing strips unknown fields, so it must change nothing.
    expect(parsed.data, where).toEqual(exchange.body);
  }
}

/**
 * `expectExchangesDocumented` against the document the API at `apiUrl` serves: what a suite
 * checks last, over every exchange it made.
 */
export async function expectDocumentedAsServed(
  apiUrl: string,
  exchanges: readonly ApiExchange[],
): Promise<void> {
  const response = await fetch(`${apiUrl}/api/v1/openapi.json`);
  expect(response.status).toBe(200);
  expectExchangesDocumented(exchanges, (await response.json()) as ServedDocument);
}
