import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Route } from './routes.js';
import { clientRoutePrefixes, formatRoute, parseRoute } from './routes.js';

const id = fc.stringMatching(/^[A-Za-z0-9_-]{1,40}$/).filter((value) => value !== 'new');
const route: fc.Arbitrary<Route> = fc.oneof(
  fc.constant<Route>({ view: 'services' }),
  id.map<Route>((value) => ({ view: 'service', id: value })),
  fc.constant<Route>({ view: 'alerts' }),
  fc.constant<Route>({ view: 'rules' }),
  fc.constant<Route>({ view: 'new-rule' }),
  id.map<Route>((value) => ({ view: 'rule', id: value })),
  fc.constant<Route>({ view: 'investigations' }),
  id.map<Route>((value) => ({ view: 'investigation', id: value })),
  fc.constant<Route>({ view: 'silences' }),
);

describe('parseRoute and formatRoute', () => {
  it('read back every route they write', () => {
    fc.assert(
      fc.property(route, (each) => {
        expect(parseRoute(formatRoute(each))).toEqual(each);
      }),
    );
  });

  it('open the services view at /', () => {
    expect(parseRoute('/')).toEqual({ view: 'services' });
  });

  it('write only paths under a prefix the server serves index.html for', () => {
    fc.assert(
      fc.property(route, (each) => {
        const first = formatRoute(each).split('/')[1];
        expect(clientRoutePrefixes).toContain(first);
      }),
    );
  });

  it('call anything else not found, never throwing', () => {
    fc.assert(
      fc.property(fc.string(), (path) => {
        const parsed = parseRoute(`/${path}`);
        if (parsed.view === 'not-found') expect(parsed.path).toBe(`/${path}`);
      }),
    );
    expect(parseRoute('/services/a/b')).toEqual({ view: 'not-found', path: '/services/a/b' });
    expect(parseRoute('/alerts/alr_1')).toEqual({ view: 'not-found', path: '/alerts/alr_1' });
    expect(parseRoute('/services/%3Cscript%3E')).toMatchObject({ view: 'not-found' });
  });
});
