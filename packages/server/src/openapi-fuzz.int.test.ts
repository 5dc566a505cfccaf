// @services postgres
import { randomBytes } from 'node:crypto';
import { request as httpRequest } from 'node:http';
import type { IncomingMessage } from 'node:http';
import { once } from 'node:events';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSampleTimeColumn, refreshRollups } from '@monitor/db';
import type { ServiceListResponse, ServiceMetricsResponse } from '@monitor/schemas';
import { runSchemathesis, schemathesisVersion } from '@monitor/testkit';
import { postIngest } from './testing/ingest-client.js';
import type { MonitorStack } from './testing/monitor-stack.js';
import { createMonitorStack } from './testing/monitor-stack.js';
import type { ApiExchange } from '@monitor/testkit/builders';
import { buildAlertRuleCreateRequest } from '@monitor/testkit/builders';
import { expectExchangesDocumented } from './testing/openapi-conformance.js';
import type { RoleProcess } from './testing/role-process.js';

/**
 * The service against its own OpenAPI document, as a hostile client sees it: the findings of the
 * input review replayed end to end, then schemathesis over every operation of the served
 * document. The whole service runs in one process (`monitor all`: in-process bus, real
 * PostgreSQL), as `npm start` runs it.
 */

const key = `mon_test_${randomBytes(16).toString('hex')}`;
/** The checks that must hold for every generated request (docs/api.md#input-limits). */
const checks = [
  'not_a_server_error',
  'status_code_conformance',
  'content_type_conformance',
  'response_schema_conformance',
  'response_headers_conformance',
  'negative_data_rejection',
  'missing_required_header',
  'unsupported_method',
  'allow_header_conformance',
  'ignored_auth',
];
/** Fixed, so a failure reproduces; bounded, so the run stays within about a minute on 2 cores. */
const seed = 20261123;
const maxExamples = 25;

let stack: MonitorStack;
let monitor: RoleProcess;
const exchanges: ApiExchange[] = [];

type Reply = {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
};

/** node:http rather than fetch, which refuses some methods (TRACE) and normalizes others. */
async function send(method: string, path: string, body?: string): Promise<Reply> {
  const req = httpRequest(monitor.baseUrl + path, {
    method,
    headers: {
      'x-api-key': key,
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
  });
  req.end(body);
  const [res] = (await once(req, 'response')) as [IncomingMessage];
  let text = '';
  for await (const chunk of res) text += (chunk as Buffer).toString();
  const contentType = String(res.headers['content-type'] ?? '');
  const parsed: unknown = contentType.includes('json') ? JSON.parse(text) : text || undefined;
  exchanges.push({
    method,
    path,
    status: res.statusCode ?? 0,
    contentType,
    body: parsed,
  });
  return { status: res.statusCode ?? 0, headers: res.headers, body: parsed };
}

const errorPaths = (reply: Reply) =>
  (reply.body as { errors?: { path: string }[] }).errors?.map((error) => error.path);

beforeAll(async () => {
  stack = await createMonitorStack(
    'openapi_fuzz',
    { MONITOR_BOOTSTRAP_API_KEY: key, INGEST_RATE_LIMIT_PER_MINUTE: '1000000' },
    { bus: 'in-process' },
  );
  monitor = await stack.start('all');
  const seeded = await postIngest(
    monitor.baseUrl,
    { host: 'web-1', metrics: { cpu_percent: 42 }, tags: { env: 'prod' } },
    { key },
  );
  expect(seeded.status).toBe(200);
});

afterAll(async () => {
  await stack?.stop();
});

describe('the service under hostile input', () => {
  it('refuses what it cannot store with a 422 at the exact path, before any 200', async () => {
    const ingest = (body: string) => send('POST', '/api/v1/ingest', body);
    expect(errorPaths(await ingest('{"host":"x\\u0000y","metrics":{"m":1}}'))).toEqual(['host']);
    expect(
      errorPaths(
        await ingest(
          '[{"host":"a","metrics":{"m":1}},{"host":"b","metrics":{"m":1},"tags":{"env":"a\\u0000"}}]',
        ),
      ),
    ).toEqual(['[1].tags.env']);
    expect(
      errorPaths(await ingest('{"host":"a","metrics":{"m":1},"tags":{"env":"\\udc00"}}')),
    ).toEqual(['tags.env']);
    const processes = ['a', 'b', 'c', 'd\u0000'].map((name, pid) => ({ name, pid }));
    expect(
      errorPaths(await ingest(JSON.stringify({ host: 'a', metrics: { m: 1 }, processes }))),
    ).toEqual(['processes[3].name']);
    expect(errorPaths(await ingest('{"host":"a","metrics":{"m":1.7976931348623157e308}}'))).toEqual(
      ['metrics.m'],
    );
    expect(errorPaths(await ingest('{"host":"a","metrics":{"__proto__":1,"m":2}}'))).toEqual([
      'metrics.__proto__',
    ]);

    expect(errorPaths(await send('GET', '/api/v1/services?tag.env=%00'))).toEqual(['tag.env']);
    const rule = buildAlertRuleCreateRequest({ name: 'a\u0000' });
    expect(errorPaths(await send('POST', '/api/v1/alerts/rules', JSON.stringify(rule)))).toEqual([
      'name',
    ]);
    expect(
      errorPaths(
        await send(
          'PUT',
          '/api/v1/notification-channels/slack',
          '{"webhook_url":"https://hooks.slack.com/a\\u0000b"}',
        ),
      ),
    ).toEqual(['webhook_url']);

    const trace = await send('TRACE', '/api/v1/services');
    expect([trace.status, trace.headers['allow']]).toEqual([405, 'GET, HEAD']);
    expect((await send('TRACE', '/healthz')).status).toBe(405);

    // Nothing of it was stored: the only service is the one seeded.
    const services = await send('GET', '/api/v1/services');
    expect((services.body as ServiceListResponse).services.map((s) => s.name)).toEqual(['web-1']);
    const served = (await send('GET', '/api/v1/openapi.json')).body;
    expectExchangesDocumented(exchanges, served as Parameters<typeof expectExchangesDocumented>[1]);
  });

  it('serves the metrics of values stored before the limit without a 500, and rolls them up', async () => {
    const services = (await send('GET', '/api/v1/services')).body as ServiceListResponse;
    const serviceId = services.services[0]!.id;
    const at = Date.now() - 5 * 60_000;
    // Written past the edge, as a sample stored before the input policy would be, in the
    // storage's own time column (epoch milliseconds on TimescaleDB, timestamptz on PostgreSQL).
    const time =
      (await readSampleTimeColumn(stack.db)) === 'epochMs'
        ? stack.db.sql`t::int8`
        : stack.db.sql`timestamptz 'epoch' + t * interval '1 millisecond'`;
    await stack.db.sql`
      with series_row as (
        insert into series (service_id, metric) values (${serviceId}, 'legacy')
        on conflict (service_id, metric, (coalesce(md5(labels::text), '')))
          do update set metric = excluded.metric
        returning id
      )
      insert into samples (time, series_id, value)
      select ${time}, id, ${1.7976931348623157e308} from series_row,
        unnest(${[at, at + 1]}::float8[]) as t
    `;
    const path = `/api/v1/services/${serviceId}/metrics?metric=legacy`;
    // Read from raw samples or the rollups, depending on where maintenance got to: 200 either way.
    expect((await send('GET', path)).status).toBe(200);
    await expect(refreshRollups(stack.db, { now: new Date() })).resolves.toMatchObject({
      setAside: [],
    });
    const after = await send('GET', path);
    expect(after.status).toBe(200);
    expect((after.body as ServiceMetricsResponse).points).toEqual([
      expect.objectContaining({ avg: 1e100, min: 1e100, max: 1e100, count: 2 }),
    ]);
  });
});

describe(`schemathesis ${schemathesisVersion} over the served OpenAPI document`, () => {
  it('finds no server error and no response that contradicts the document', async () => {
    const startedAt = Date.now();
    const result = await runSchemathesis({
      baseUrl: monitor.baseUrl,
      apiKey: key,
      checks,
      seed,
      maxExamples,
      extraArgs: ['--generation-allow-x00', 'true'],
    });
    const seconds = Math.round((Date.now() - startedAt) / 1000);
    process.stdout.write(`schemathesis: ${result.summary} in ${seconds}s\n`);
    expect(result.code, `schemathesis failed:\n${result.output.slice(-20_000)}`).toBe(0);
    const document = (await send('GET', '/api/v1/openapi.json')).body as {
      paths: Record<string, object>;
    };
    const operations = Object.values(document.paths).flatMap((item) => Object.keys(item)).length;
    // Every operation of the document was exercised.
    expect(result.testCases).toBeGreaterThanOrEqual(operations);
    expect(monitor.output()).not.toMatch(/"level":"(error|fatal)"/);
  }, 300_000);
});
