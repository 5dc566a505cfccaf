import { describe, expect, it } from 'vitest';
import type { z } from 'zod';
import { alertRuleCreateSchema, alertRuleUpdateSchema } from './alert-rules.js';
import { parseBody, parseServiceListQuery, parseServiceMetricsQuery } from './api.js';
import { parseIngestBody } from './parse-ingest-body.js';
import { isStorableText, maxMetricMagnitude, storableTextMessage } from './input-policy.js';
import { webhookTargetSchema, slackTargetSchema } from './notification-channels.js';

const nul = '\u0000';
const loneHigh = '\ud800';
const loneLow = '\udc00';

/** What an agent's JSON body turns into: JSON.parse keeps `__proto__` as an own key. */
const fromJson = (text: string): unknown => JSON.parse(text);

function ingestIssues(value: unknown): { path: string; message: string }[] {
  const result = parseIngestBody(value);
  if (result.success) return [];
  return result.error.issues.map((issue) => ({
    path: issue.path.map((segment) => String(segment)).join('.'),
    message: issue.message,
  }));
}

const minimal = { host: 'web-1', metrics: { cpu: 1 } };

describe('isStorableText', () => {
  it('refuses NUL and unpaired surrogates, accepts surrogate pairs', () => {
    expect(isStorableText('web-1 ✓ 😀')).toBe(true);
    expect(isStorableText(`a${nul}b`)).toBe(false);
    expect(isStorableText(`a${loneHigh}`)).toBe(false);
    expect(isStorableText(`${loneLow}a`)).toBe(false);
    expect(isStorableText(`${loneLow}${loneHigh}`)).toBe(false); // reversed: not a pair
    expect(isStorableText('')).toBe(true);
  });
});

describe('the ingest body under the input policy', () => {
  it.each([
    ['host', { ...minimal, host: `x${nul}y` }, 'host'],
    ['host, lone surrogate', { ...minimal, host: `x${loneHigh}` }, 'host'],
    ['tag value', { ...minimal, tags: { env: `a${nul}` } }, 'tags.env'],
    ['tag value, lone surrogate', { ...minimal, tags: { env: loneLow } }, 'tags.env'],
    ['tag key', { ...minimal, tags: { [`e${nul}`]: 'prod' } }, `tags.e${nul}`],
    [
      'container',
      { ...minimal, docker_containers: [{ name: `c${nul}` }] },
      'docker_containers.0.name',
    ],
    [
      'container image',
      { ...minimal, docker_containers: [{ name: 'c', image: loneHigh }] },
      'docker_containers.0.image',
    ],
    [
      'process name',
      {
        ...minimal,
        processes: [
          { name: 'a', pid: 1 },
          { name: 'b', pid: 2 },
          { name: 'c', pid: 3 },
          { name: `d${nul}`, pid: 4 },
        ],
      },
      'processes.3.name',
    ],
  ])('refuses NUL or a lone surrogate in the %s at its path', (_what, payload, path) => {
    expect(ingestIssues(payload)).toContainEqual({ path, message: expect.any(String) });
    expect(ingestIssues([minimal, payload])).toContainEqual({
      path: `1.${path}`,
      message: expect.any(String),
    });
  });

  it('says what is wrong with the text', () => {
    expect(ingestIssues({ ...minimal, host: nul })).toEqual([
      { path: 'host', message: storableTextMessage },
    ]);
    expect(ingestIssues({ ...minimal, tags: { [nul]: 'v' } })).toEqual([
      { path: `tags.${nul}`, message: `keys ${storableTextMessage}` },
    ]);
  });

  it('accepts emoji (surrogate pairs) anywhere', () => {
    expect(ingestIssues({ ...minimal, host: 'web-😀', tags: { '😀': '😀' } })).toEqual([]);
  });

  it('refuses metric values beyond ±1e100, the range whose aggregates cannot overflow', () => {
    expect(ingestIssues({ host: 'h', metrics: { m: maxMetricMagnitude, n: -1e100 } })).toEqual([]);
    expect(ingestIssues({ host: 'h', metrics: { m: 1.7976931348623157e308 } })).toEqual([
      { path: 'metrics.m', message: 'must be a finite number from -1e100 to 1e100' },
    ]);
    expect(ingestIssues({ host: 'h', metrics: { m: -1.1e100 } })).toHaveLength(1);
  });

  it('refuses `__proto__` as a metric name or tag key instead of dropping it', () => {
    expect(ingestIssues(fromJson('{"host":"h","metrics":{"__proto__":1,"cpu":2}}'))).toEqual([
      { path: 'metrics.__proto__', message: '`__proto__` is a reserved name' },
    ]);
    expect(
      ingestIssues(fromJson('{"host":"h","metrics":{"cpu":2},"tags":{"__proto__":"x"}}')),
    ).toEqual([{ path: 'tags.__proto__', message: '`__proto__` is a reserved name' }]);
  });

  it('stores other names of Object.prototype as ordinary own metrics', () => {
    const result = parseIngestBody(
      fromJson('{"host":"h","metrics":{"constructor":1,"toString":2}}'),
    );
    expect(result.success).toBe(true);
    const metrics = result.success ? result.data[0]!.metrics : {};
    expect(Object.hasOwn(metrics, 'constructor') && Object.hasOwn(metrics, 'toString')).toBe(true);
    expect(metrics).toEqual({ constructor: 1, toString: 2 });
  });
});

describe('query parameters under the input policy', () => {
  it('refuses NUL and lone surrogates in tag filters, naming the parameter', () => {
    for (const query of [{ 'tag.env': nul }, { 'tag.env': loneHigh }, { [`tag.e${nul}`]: 'x' }]) {
      const result = parseServiceListQuery(query);
      expect(result.success).toBe(false);
      if (!result.success) {
        expect(result.issues.map((issue) => issue.parameter)).toEqual(Object.keys(query));
      }
    }
  });

  it('refuses tag.__proto__ instead of dropping the filter', () => {
    const result = parseServiceListQuery(Object.fromEntries([['tag.__proto__', 'x']]));
    expect(result.success).toBe(false);
  });

  it('refuses __proto__ as a metric name', () => {
    expect(parseServiceMetricsQuery({ metric: '__proto__' }, Date.now()).success).toBe(false);
  });
});

describe('API bodies under the input policy', () => {
  const rule = {
    name: 'cpu high',
    metric: 'cpu',
    condition: 'greater_than',
    threshold: 90,
    severity: 'critical',
  };

  function bodyIssues(schema: z.ZodType, body: unknown): { path: string; message: string }[] {
    const result = parseBody(schema, body);
    return result.success
      ? []
      : result.issues.map((issue) => ({ path: issue.path.join('.'), message: issue.message }));
  }

  it('refuses NUL in a rule name, scope key or value', () => {
    expect(bodyIssues(alertRuleCreateSchema, { ...rule, name: `a${nul}` })).toEqual([
      { path: 'name', message: storableTextMessage },
    ]);
    expect(bodyIssues(alertRuleUpdateSchema, { scope: { env: nul } })).toEqual([
      { path: 'scope.env', message: storableTextMessage },
    ]);
    expect(bodyIssues(alertRuleUpdateSchema, { scope: { [loneHigh]: 'x' } })).toEqual([
      { path: `scope.${loneHigh}`, message: `keys ${storableTextMessage}` },
    ]);
    expect(bodyIssues(alertRuleUpdateSchema, fromJson('{"scope":{"__proto__":"x"}}'))).toEqual([
      { path: 'scope.__proto__', message: '`__proto__` is a reserved name' },
    ]);
  });

  it('refuses a blank rule name with one issue', () => {
    for (const name of ['', ' ', '\t\u00a0\ufeff']) {
      expect(bodyIssues(alertRuleCreateSchema, { ...rule, name })).toEqual([
        { path: 'name', message: 'must not be blank' },
      ]);
    }
  });

  it('refuses NUL in a channel URL or webhook secret', () => {
    expect(
      bodyIssues(slackTargetSchema, { webhook_url: `https://hooks.slack.com/a${nul}b` }),
    ).toEqual([{ path: 'webhook_url', message: storableTextMessage }]);
    expect(
      bodyIssues(webhookTargetSchema, {
        url: 'https://example.com/hook',
        secret: `0123456789abcdef${loneLow}`,
      }),
    ).toEqual([{ path: 'secret', message: storableTextMessage }]);
  });
});

describe('channel URLs', () => {
  it('are refused whenever the documented pattern refuses them, though the URL parser would take them', () => {
    for (const webhook_url of [
      ' https://x.example',
      'HTTPS://x.example',
      'https:x.example',
      'https://x .example',
    ]) {
      expect(slackTargetSchema.safeParse({ webhook_url }).success, webhook_url).toBe(false);
    }
    expect(
      slackTargetSchema.safeParse({ webhook_url: 'https://hooks.slack.com/services/T/B/x' })
        .success,
    ).toBe(true);
  });
});
