import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { describe, expect, it } from 'vitest';
import { formatRateLimit, rateLimitPolicyName } from '@monitor/schemas';
import { createOpenApiDocument } from './openapi-document.js';

// ajv-formats is CommonJS: its default export is the plugin function itself.
const addFormats = addFormatsModule as unknown as (ajv: Ajv2020) => Ajv2020;

type Schema = Record<string, unknown>;
type Parameter = { name: string; in: string; schema: Schema; description?: string };
type Operation = {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
  responses: Record<string, { headers?: Record<string, { schema: Schema; example?: string }> }>;
};

const document = createOpenApiDocument() as unknown as {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
};
const ajv = new Ajv2020({ strict: false, allErrors: true });
addFormats(ajv);
ajv.addSchema(document, 'openapi');

const operation = (path: string, method: string): Operation => document.paths[path]![method]!;
const parameter = (path: string, method: string, name: string): Parameter =>
  operation(path, method).parameters!.find((p) => p.name === name)!;

/** A validator of the schema at a JSON pointer of the served document. */
function validator(pointer: string) {
  const validate = ajv.getSchema(`openapi#${pointer}`);
  if (validate === undefined) throw new Error(`no schema at ${pointer}`);
  return (value: unknown) => validate(value);
}

const escape = (segment: string) => segment.replaceAll('~', '~0').replaceAll('/', '~1');
const bodyPointer = (path: string, method: string) =>
  `/paths/${escape(path)}/${method}/requestBody/content/application~1json/schema`;

/** Every schema reachable from `schema`, following $refs into the document's components. */
function* walk(schema: unknown, seen = new Set<unknown>()): Generator<Schema> {
  if (typeof schema !== 'object' || schema === null || seen.has(schema)) return;
  seen.add(schema);
  const ref = (schema as { $ref?: string }).$ref;
  if (ref !== undefined) {
    yield* walk(document.components.schemas[ref.split('/').pop()!], seen);
    return;
  }
  yield schema as Schema;
  for (const value of Object.values(schema)) {
    if (Array.isArray(value)) for (const item of value) yield* walk(item, seen);
    else yield* walk(value, seen);
  }
}

describe('the OpenAPI document states every limit the server enforces', () => {
  it('gives every request string a pattern, an enum or a format (NUL and lone surrogates refused)', () => {
    const loose: string[] = [];
    for (const [path, item] of Object.entries(document.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const roots: unknown[] = [
          ...(op.parameters ?? []).map((p) => p.schema),
          ...Object.values(op.requestBody?.content ?? {}).map((c) => c.schema),
        ];
        for (const root of roots) {
          for (const schema of walk(root)) {
            const isString = schema['type'] === 'string';
            const bound = 'pattern' in schema || 'enum' in schema || 'format' in schema;
            if (isString && !bound) loose.push(`${method} ${path}: ${JSON.stringify(schema)}`);
          }
        }
      }
    }
    expect(loose).toEqual([]);
  });

  it('states that lone surrogates are refused (no portable pattern can)', () => {
    const info = (createOpenApiDocument() as unknown as { info: { description: string } }).info;
    expect(info.description).toMatch(/NUL \(U\+0000\) or an unpaired UTF-16 surrogate/);
    expect(info.description).toContain('-1e100 to 1e100');
  });

  it('patterns avoid surrogate escapes, which regex engines outside JavaScript refuse', () => {
    const patterns = [...walk(document)].flatMap((schema) =>
      typeof schema['pattern'] === 'string' ? [schema['pattern']] : [],
    );
    expect(patterns.length).toBeGreaterThan(5);
    expect(patterns.filter((pattern) => /\\ud[89a-f]/i.test(pattern))).toEqual([]);
  });

  it('refuses NUL and __proto__ in an ingest body, as the server does', () => {
    const valid = validator(bodyPointer('/api/v1/ingest', 'post'));
    expect(valid({ host: 'web-😀', metrics: { m: 1 }, tags: { env: 'prod' } })).toBe(true);
    expect(valid({ host: 'x\u0000y', metrics: { m: 1 } })).toBe(false);
    expect(valid({ host: 'x', metrics: { m: 1 }, tags: { ['e\u0000']: 'v' } })).toBe(false);
    expect(valid(JSON.parse('{"host":"x","metrics":{"__proto__":1}}'))).toBe(false);
    expect(valid([{ host: 'x', metrics: { m: 1 }, processes: [{ name: '\u0000', pid: 1 }] }])).toBe(
      false,
    );
  });

  it('states at least one metric and the value range', () => {
    const valid = validator(bodyPointer('/api/v1/ingest', 'post'));
    expect(valid({ host: 'x', metrics: {} })).toBe(false);
    expect(valid({ host: 'x', metrics: { m: 1e100 } })).toBe(true);
    expect(valid({ host: 'x', metrics: { m: 1.7976931348623157e308 } })).toBe(false);
  });

  it('states that a rule name must not be blank', () => {
    const valid = validator(bodyPointer('/api/v1/alerts/rules', 'post'));
    const rule = { metric: 'cpu', condition: 'equal', threshold: 1, severity: 'info' };
    expect(valid({ ...rule, name: 'cpu high' })).toBe(true);
    for (const name of ['', ' ', '\t\u00a0\ufeff', 'a\u0000']) {
      expect(valid({ ...rule, name }), JSON.stringify(name)).toBe(false);
    }
    const update = validator(bodyPointer('/api/v1/alerts/rules/{id}', 'patch'));
    expect(update({ name: ' ' })).toBe(false);
    expect(update({})).toBe(false);
  });

  it('states the offset ceiling with the message the server gives', () => {
    const offset = parameter('/api/v1/alerts', 'get', 'offset');
    expect(offset.schema).toMatchObject({ minimum: 0, maximum: Number.MAX_SAFE_INTEGER });
    expect(offset.description).toContain(String(Number.MAX_SAFE_INTEGER));
  });

  it('says that from must be before to', () => {
    const path = '/api/v1/services/{id}/metrics';
    expect(parameter(path, 'get', 'from').description).toMatch(/before `to`/);
    expect(parameter(path, 'get', 'to').description).toMatch(/after `from`/);
    expect(parameter(path, 'get', 'metric').schema['pattern']).toContain('__proto__');
  });

  it('gives the RateLimit headers an example of what is sent, within their pattern', () => {
    const headers = operation('/api/v1/ingest', 'post').responses['200']!.headers!;
    const sent = formatRateLimit(rateLimitPolicyName(6000), 5999, 60);
    expect(headers['RateLimit']!.example).toBe(sent);
    for (const header of Object.values(headers)) {
      expect(header.example).toMatch(new RegExp(header.schema['pattern'] as string));
    }
  });
});
