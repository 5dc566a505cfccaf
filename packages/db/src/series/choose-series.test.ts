import { createLabelMatcher } from '@monitor/promql';
import { describe, expect, it } from 'vitest';
import { pushedDownMatchers, storedSeriesLabels } from './choose-series.js';

describe('storedSeriesLabels', () => {
  it("labels an /ingest series by its service's tags and name", () => {
    expect(storedSeriesLabels('cpu', 'web-1', { env: 'prod' }, null)).toEqual([
      { name: '__name__', value: 'cpu' },
      { name: 'env', value: 'prod' },
      { name: 'host', value: 'web-1' },
    ]);
  });

  it('labels a series written with labels by those labels alone', () => {
    expect(storedSeriesLabels('cpu', 'web-1', { env: 'prod' }, { job: 'node' })).toEqual([
      { name: '__name__', value: 'cpu' },
      { name: 'job', value: 'node' },
    ]);
  });
});

describe('pushedDownMatchers', () => {
  it('pushes the non-empty equality matchers down, the metric and host apart', () => {
    const matchers = [
      createLabelMatcher('__name__', '=', 'cpu'),
      createLabelMatcher('host', '=', 'web-1'),
      createLabelMatcher('env', '=', 'prod'),
      createLabelMatcher('job', '=', ''),
      createLabelMatcher('dc', '!=', 'x'),
      createLabelMatcher('region', '=~', 'eu.*'),
    ];
    expect(pushedDownMatchers(matchers)).toEqual({
      metric: 'cpu',
      host: 'web-1',
      tags: { env: 'prod' },
    });
  });

  it('pushes nothing down without an equality matcher', () => {
    expect(pushedDownMatchers([createLabelMatcher('host', '=~', 'web-.*')])).toEqual({
      metric: null,
      host: null,
      tags: {},
    });
  });
});
