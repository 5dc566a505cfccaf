import { describe, expect, it } from 'vitest';
import type { ApiKeyAuthenticator } from '@monitor/auth';
import type { ExemplarReader, ExemplarsRead } from '@monitor/db';
import { DatabaseUnavailableError } from '@monitor/db';
import { createLogger } from '@monitor/platform';
import { labelsFrom } from '@monitor/promql';
import { serveRouter } from '../testing/serve-router.js';
import { createPrometheusRouter } from './prometheus-router.js';

type ReadCall = {
  orgId: string;
  selectors: string[][];
  range: { startMs: number; endMs: number };
  limits: { maxSeries: number; maxExemplars: number };
};

/** An exemplar reader that records its calls and answers `next` (or throws it). */
function fakeExemplarReader() {
  const calls: ReadCall[] = [];
  let next: ExemplarsRead | Error = { series: [] };
  const reader: ExemplarReader = {
    read: (orgId, selectors, range, limits) => {
      calls.push({
        orgId,
        selectors: selectors.map((matchers) =>
          matchers.map((m) => `${m.name}${m.type}${JSON.stringify(m.value)}`),
        ),
        range,
        limits,
      });
      return next instanceof Error ? Promise.reject(next) : Promise.resolve(next);
    },
  };
  return { reader, calls, answer: (read: ExemplarsRead | Error) => (next = read) };
}

const authenticator: ApiKeyAuthenticator = {
  authenticate: (key) =>
    Promise.resolve(
      key === 'read-key' ? { keyId: 'key_r', orgId: 'org_a', scopes: ['read'] } : undefined,
    ),
};

const unused = () => {
  throw new Error('not used by query_exemplars');
};

const exemplars = fakeExemplarReader();
const { call } = serveRouter(() =>
  createPrometheusRouter({
    authenticator,
    logger: createLogger({ level: 'silent', name: 'test' }),
    engineFor: unused,
    sourceFor: unused,
    limits: {
      maxRangeMs: 86_400_000,
      maxSeries: 50,
      maxSamples: 1000,
      maxExemplars: 200,
      timeoutMs: 1000,
    },
    nowMs: () => 0,
    sourceTiers: () => Promise.resolve(undefined),
    exemplars: exemplars.reader,
    ruleGroups: { listOrgGroups: unused },
    defaultRuleIntervalMs: 60_000,
  }),
);
const path = '/prometheus/api/v1/query_exemplars';

describe('query_exemplars, served', () => {
  it("reads every selector's series of the key's organization within start and end", async () => {
    exemplars.answer({
      series: [
        {
          seriesLabels: labelsFrom({ __name__: 'up', job: 'node' }),
          exemplars: [{ timeMs: 1500, value: 1, labels: { trace_id: 'abc' } }],
        },
      ],
    });
    const query = 'rate(a{job="x"}[5m]) / on(job) b';
    const result = await call(`${path}?query=${encodeURIComponent(query)}&start=1&end=2.5`, {
      key: 'read-key',
    });
    expect(result).toMatchObject({
      status: 200,
      body: {
        status: 'success',
        data: [
          {
            seriesLabels: { __name__: 'up', job: 'node' },
            exemplars: [{ labels: { trace_id: 'abc' }, value: '1', timestamp: 1.5 }],
          },
        ],
      },
    });
    expect(exemplars.calls.at(-1)).toEqual({
      orgId: 'org_a',
      selectors: [['job="x"', '__name__="a"'], ['__name__="b"']],
      range: { startMs: 1000, endMs: 2500 },
      limits: { maxSeries: 50, maxExemplars: 200 },
    });
  });

  it('takes the query from a form body, and all of time without start and end', async () => {
    exemplars.answer({ series: [] });
    const result = await call(path, {
      method: 'POST',
      key: 'read-key',
      raw: { data: 'query=up', contentType: 'application/x-www-form-urlencoded' },
    });
    expect(result).toMatchObject({ status: 200, body: { status: 'success', data: [] } });
    expect(exemplars.calls.at(-1)?.range).toEqual({
      startMs: -9_223_372_036_854,
      endMs: 9_223_372_036_854,
    });
  });

  it('answers 204 without reading for a query without a selector', async () => {
    const before = exemplars.calls.length;
    const result = await call(`${path}?query=1%2B1`, { key: 'read-key' });
    expect(result).toMatchObject({ status: 204, body: undefined });
    expect(exemplars.calls).toHaveLength(before);
  });

  it('refuses a read over a limit as bad_data, naming it', async () => {
    exemplars.answer({ overLimit: 'maxSeries' });
    expect(await call(`${path}?query=up`, { key: 'read-key' })).toMatchObject({
      status: 400,
      body: {
        status: 'error',
        errorType: 'bad_data',
        error: "more than 50 series match: narrow the query's selectors",
      },
    });
    exemplars.answer({ overLimit: 'maxExemplars' });
    expect(await call(`${path}?query=up`, { key: 'read-key' })).toMatchObject({
      status: 400,
      body: {
        errorType: 'bad_data',
        error: "more than 200 exemplars match: narrow the query's selectors or the time range",
      },
    });
  });

  it('answers 503 while the database is away', async () => {
    exemplars.answer(new DatabaseUnavailableError(new Error('connect ECONNREFUSED')));
    expect(await call(`${path}?query=up`, { key: 'read-key' })).toMatchObject({
      status: 503,
      body: { status: 'error', errorType: 'unavailable' },
    });
  });
});
