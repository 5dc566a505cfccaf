/**
 * The console's client routes: every view has its own path, so a deep link survives a reload
 * (the server answers each of these paths with index.html). Pure: parsed and formatted here,
 * pushed to `history` by the app.
 */
export type Route =
  | { view: 'services' }
  | { view: 'service'; id: string }
  | { view: 'alerts' }
  | { view: 'rules' }
  | { view: 'rule'; id: string }
  | { view: 'new-rule' }
  | { view: 'investigations' }
  | { view: 'investigation'; id: string }
  | { view: 'silences' }
  | { view: 'not-found'; path: string };

/** The first path segment of every client route (the server serves index.html for these). */
export const clientRoutePrefixes = [
  'services',
  'alerts',
  'rules',
  'investigations',
  'silences',
] as const;

const idPattern = /^[A-Za-z0-9_-]{1,128}$/;

export function parseRoute(pathname: string): Route {
  const segments = pathname.split('/').filter((segment) => segment !== '');
  const [first, second, ...rest] = segments;
  if (rest.length > 0) return { view: 'not-found', path: pathname };
  const id = second !== undefined && idPattern.test(second) ? second : undefined;
  if (second !== undefined && id === undefined) return { view: 'not-found', path: pathname };
  switch (first) {
    case undefined:
      return { view: 'services' };
    case 'services':
      return id === undefined ? { view: 'services' } : { view: 'service', id };
    case 'alerts':
      return id === undefined ? { view: 'alerts' } : { view: 'not-found', path: pathname };
    case 'rules':
      if (id === undefined) return { view: 'rules' };
      return id === 'new' ? { view: 'new-rule' } : { view: 'rule', id };
    case 'investigations':
      return id === undefined ? { view: 'investigations' } : { view: 'investigation', id };
    case 'silences':
      return id === undefined ? { view: 'silences' } : { view: 'not-found', path: pathname };
    default:
      return { view: 'not-found', path: pathname };
  }
}

export function formatRoute(route: Route): string {
  switch (route.view) {
    case 'services':
      return '/services';
    case 'service':
      return `/services/${encodeURIComponent(route.id)}`;
    case 'alerts':
      return '/alerts';
    case 'rules':
      return '/rules';
    case 'rule':
      return `/rules/${encodeURIComponent(route.id)}`;
    case 'new-rule':
      return '/rules/new';
    case 'investigations':
      return '/investigations';
    case 'investigation':
      return `/investigations/${encodeURIComponent(route.id)}`;
    case 'silences':
      return '/silences';
    case 'not-found':
      return route.path;
  }
}
