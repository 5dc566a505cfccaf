import { randomBytes } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { findApiRoute, toOpenApiPath } from '@monitor/api';
import { runSchemathesis, schemathesisVersion } from '@monitor/testkit';
import type { ComposeStack } from './testing/compose-stack.js';
import { startComposeStack } from './testing/compose-stack.js';
import type { ApiExchange } from '@monitor/testkit/builders';
import { describeAlertRulesApi } from './testing/http-api/alert-rules.suite.js';
import { describeAlertsApi } from './testing/http-api/alerts.suite.js';
import { describeIngestApi } from './testing/http-api/ingest.suite.js';
import { describeInvestigationsApi } from './testing/http-api/investigations.suite.js';
import { describeNotificationChannelsApi } from './testing/http-api/notification-channels.suite.js';
import { describeServicesApi } from './testing/http-api/services.suite.js';
import { describeSilencesApi } from './testing/http-api/silences.suite.js';

/**
 * The distributed stack as `docker compose up -d` runs it (docker-compose.yml, plus the
 * docker-compose.override.yml of tools/build-machine/build-local-images.sh when there is one),
 * reached only through the edge on 127.0.0.1: every role in its container, Kafka, PostgreSQL and
 * Redis in theirs. The images must be built (`docker compose build`, see .ci/run). It runs the same HTTP
 * API suites as the local int tests, checks that together they called every operation of the
 * served document, and runs schemathesis over it. Last, the storage: the stack's database is
 * TimescaleDB (timescale/timescaledb:2.28.3-pg15, or its local stand-in) and its own job scheduler
 * has run the refresh policy. Then `docker compose down -v`, whatever happens.
 */

let stack: ComposeStack;

beforeAll(async () => {
  stack = await startComposeStack();
}, 720_000);

afterAll(async () => {
  await stack?.down();
}, 200_000);

const suiteExchanges: Record<string, ApiExchange[]> = {};
function exchangesOf(suite: string): ApiExchange[] {
  return (suiteExchanges[suite] = []);
}

describe('the compose stack behind its edge', () => {
  it('serves the web console at /', async () => {
    const res = await fetch(`${stack.baseUrl}/`);
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toMatch(/^text\/html/);
    expect(await res.text()).toMatch(/<script[^>]+src="\/console\/assets\//);
  });

  it('lists a host sent to the gateway once the writer stored it (gateway, Kafka, writer, PostgreSQL, api)', async () => {
    const host = `compose-${randomBytes(4).toString('hex')}`;
    const headers = { 'x-api-key': stack.bootstrapKey, 'content-type': 'application/json' };
    const ingest = await fetch(`${stack.baseUrl}/api/v1/ingest`, {
      method: 'POST',
      headers,
      body: JSON.stringify({ host, metrics: { cpu_percent: 12.5, memory_percent: 40 } }),
    });
    expect(ingest.status).toBe(200);
    expect(await ingest.json()).toEqual({ status: 'ok', events_accepted: 2 });
    await vi.waitFor(
      async () => {
        const res = await fetch(`${stack.baseUrl}/api/v1/services`, { headers });
        const body = (await res.json()) as { services: { name: string }[] };
        expect(body.services.map((service) => service.name)).toContain(host);
      },
      { timeout: 60_000, interval: 500 },
    );
  });
});

describe('the ingest API suite through the edge', () => {
  describeIngestApi(() => stack, exchangesOf('ingest'));
});

describe('the services API suite through the edge', () => {
  describeServicesApi(() => stack, exchangesOf('services'));
});

describe('the alert rules API suite through the edge', () => {
  describeAlertRulesApi(() => stack, exchangesOf('alert rules'));
});

describe('the alerts API suite through the edge', () => {
  describeAlertsApi(() => stack, exchangesOf('alerts'));
});

describe('the silences API suite through the edge', () => {
  describeSilencesApi(() => stack, exchangesOf('silences'));
});

describe('the notification channels API suite through the edge', () => {
  describeNotificationChannelsApi(() => stack, exchangesOf('notification channels'));
});

describe('the investigations API suite through the edge', () => {
  describeInvestigationsApi(() => stack, exchangesOf('investigations'));
});

describe('the HTTP API suites together', () => {
  it('called every operation of the served OpenAPI document through the edge', async () => {
    const document = (await (await fetch(`${stack.baseUrl}/api/v1/openapi.json`)).json()) as {
      paths: Record<string, object>;
    };
    const documented = Object.entries(document.paths).flatMap(([path, item]) =>
      Object.keys(item).map((method) => `${method} ${path}`),
    );
    const called = new Set(
      Object.values(suiteExchanges)
        .flat()
        .flatMap((exchange) => {
          const route = findApiRoute(exchange.method, exchange.path);
          return route === undefined ? [] : [`${route.method} ${toOpenApiPath(route.path)}`];
        }),
    );
    expect(documented.filter((operation) => !called.has(operation))).toEqual([]);
  });

  it(`passes schemathesis ${schemathesisVersion} over every operation of the served document`, async () => {
    const result = await runSchemathesis({
      baseUrl: stack.baseUrl,
      apiKey: stack.bootstrapKey,
      checks: [
        'not_a_server_error',
        'status_code_conformance',
        'content_type_conformance',
        'response_schema_conformance',
      ],
      seed: 20261124,
      maxExamples: 10,
    });
    expect(result.code, `schemathesis failed:\n${result.output.slice(-20_000)}`).toBe(0);
    const document = (await (await fetch(`${stack.baseUrl}/api/v1/openapi.json`)).json()) as {
      paths: Record<string, object>;
    };
    const operations = Object.values(document.paths).flatMap((item) => Object.keys(item)).length;
    expect(result.testCases).toBeGreaterThanOrEqual(operations);
  }, 400_000);
});

// Last in the file: by then the stack has run for a few minutes, and the compression job of the
// raw samples, which TimescaleDB runs every 20 s in this stack (STORAGE_JOB_INTERVAL_SECONDS of
// tools/build-machine/compose-tests/compose.test-db.yml; the shipped schedule is a minute), has
// run more than once; the wait below is only a bound.
describe('the storage of the compose stack', () => {
  it('runs on TimescaleDB 2.28.3 and says so on /metrics', async () => {
    // The edge sends /metrics to the api role, whose metrics carry its `role` label as well.
    const text = await (await fetch(`${stack.baseUrl}/metrics`)).text();
    const info = text.split('\n').find((line) => line.startsWith('monitor_storage_info{'));
    expect(info).toMatch(
      /^monitor_storage_info\{[^}]*engine="timescaledb",version="2\.28\.3"[^}]*\} 1$/,
    );
    const [extension] = await stack.db.sql<{ version: string }[]>`
      select extversion as version from pg_extension where extname = 'timescaledb'
    `;
    expect(extension?.version).toBe('2.28.3');
  });

  it('keeps samples and snapshots in hypertables, and the two continuous aggregates retired', async () => {
    const hypertables = await stack.db.sql<{ name: string }[]>`
      select hypertable_name as name from timescaledb_information.hypertables
      where hypertable_schema = current_schema() order by 1
    `;
    expect(hypertables.map((row) => row.name)).toEqual(
      expect.arrayContaining(['samples', 'snapshots']),
    );
    const aggregates = await stack.db.sql<{ name: string }[]>`
      select view_name as name from timescaledb_information.continuous_aggregates
      where view_schema = current_schema() order by 1
    `;
    expect(aggregates.map((row) => row.name)).toEqual(['samples_1h', 'samples_1m']);
    // Retired by migrations 36 and 37: what they held stays readable, nothing refreshes them.
    const retired = await stack.db.sql<{ rollup: string }[]>`
      select rollup from retired_rollups order by 1`;
    expect(retired.map((row) => row.rollup)).toEqual(['samples_1h', 'samples_1m']);
  });

  it('has TimescaleDB run the compression policy of samples on its schedule, without a failure', async () => {
    const compressionStats = () => stack.db.sql<
      { successes: number; failures: number; lastStatus: string | null }[]
    >`
      select s.total_successes::int as successes, s.total_failures::int as failures,
        s.last_run_status as "lastStatus"
      from timescaledb_information.jobs j
      left join timescaledb_information.job_stats s on s.job_id = j.job_id
      where j.proc_name = 'policy_compression' and j.hypertable_schema = current_schema()
        and j.hypertable_name = 'samples'
    `;
    expect(await compressionStats()).toHaveLength(1);
    // last_run_status reads null while a run is under way (every 20 s in this stack), so wait
    // for a moment between runs rather than read it once.
    const [stats] = await vi.waitFor(
      async () => {
        const rows = await compressionStats();
        expect(rows[0]?.successes ?? 0).toBeGreaterThanOrEqual(2);
        expect(rows[0]?.lastStatus).not.toBeNull();
        return rows;
      },
      { timeout: 150_000, interval: 2_000 },
    );
    expect(stats).toMatchObject({ failures: 0, lastStatus: 'Success' });
  }, 180_000);
});
