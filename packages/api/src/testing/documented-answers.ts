import { Ajv2020 } from 'ajv/dist/2020.js';
import type { ValidateFunction } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { expect } from 'vitest';
import type { ApiExchange } from '@monitor/testkit/builders';
import { findApiRoute } from '../api-routes.js';
import { createOpenApiDocument, toOpenApiPath } from '../openapi-document.js';

// ajv-formats is CommonJS with `exports.default`; under NodeNext the default import is the module.
const addFormats = addFormatsModule as unknown as typeof addFormatsModule.default;

const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(createOpenApiDocument(), 'openapi');

const methods = ['get', 'post', 'put', 'patch', 'delete'];

/** The validator of one response body schema of the generated document, if it has one. */
export function responseSchema(
  templatePath: string,
  method: string,
  status: number,
  contentType: string,
): ValidateFunction | undefined {
  const escape = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');
  const pointer = ['paths', templatePath, method, 'responses', String(status), 'content']
    .concat(contentType)
    .map(escape)
    .join('/');
  return ajv.getSchema(`openapi#/${pointer}/schema`);
}

/**
 * Asserts that the generated OpenAPI document documents every exchange, each body valid against
 * its schema there and against the route's zod schema; outside the document are only a 405 for
 * another method on a documented path and a 404 for a path the API does not have.
 */
export function expectAnswersDocumented(exchanges: readonly ApiExchange[]): void {
  for (const exchange of exchanges) {
    const where = `${exchange.method} ${exchange.path} ${exchange.status}`;
    const operation = findApiRoute(exchange.method, exchange.path);
    if (operation === undefined) {
      const knownPath = methods.some((method) => findApiRoute(method, exchange.path));
      expect(exchange.status, where).toBe(knownPath ? 405 : 404);
      continue;
    }
    const spec = operation.responses[exchange.status];
    expect(spec, where).toBeDefined();
    if (spec!.contentType === 'none') {
      expect(exchange.contentType, where).toBe('');
      expect(exchange.body, where).toBeUndefined();
      continue;
    }
    expect(exchange.contentType.startsWith(spec!.contentType), where).toBe(true);
    const validate = responseSchema(
      toOpenApiPath(operation.path),
      operation.method,
      exchange.status,
      spec!.contentType,
    );
    expect(validate, where).toBeDefined();
    expect(validate!(exchange.body), `${where}: ${JSON.stringify(validate!.errors)}`).toBe(true);
    expect(spec!.schema.safeParse(exchange.body).success, where).toBe(true);
  }
}
