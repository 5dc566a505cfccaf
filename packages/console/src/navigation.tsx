import type { ComponentChildren } from 'preact';
import { useEffect, useState } from 'preact/hooks';
import type { Route } from './routes.js';
import { formatRoute, parseRoute } from './routes.js';

const navigateEvent = 'monitor:navigate';

/** Moves to `route` through the history API (no reload); `replace` keeps the history short. */
export function navigate(route: Route | string, replace = false): void {
  const path = typeof route === 'string' ? route : formatRoute(route);
  if (replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  window.dispatchEvent(new Event(navigateEvent));
}

/** The route of the current location, following back/forward and `navigate`. */
export function useRoute(): { route: Route; search: URLSearchParams } {
  const read = () => ({
    route: parseRoute(location.pathname),
    search: new URLSearchParams(location.search),
  });
  const [state, setState] = useState(read);
  useEffect(() => {
    const update = () => setState(read());
    window.addEventListener('popstate', update);
    window.addEventListener(navigateEvent, update);
    return () => {
      window.removeEventListener('popstate', update);
      window.removeEventListener(navigateEvent, update);
    };
  }, []);
  return state;
}

/** Replaces one query parameter of the current URL (view state that should survive a reload). */
export function setSearchParam(name: string, value: string | undefined): void {
  const params = new URLSearchParams(location.search);
  if (value === undefined || value === '') params.delete(name);
  else params.set(name, value);
  const search = params.toString();
  navigate(`${location.pathname}${search === '' ? '' : `?${search}`}`, true);
}

/** An ordinary link (open in a new tab works) that navigates in place on a plain click. */
export function Link(props: {
  to: Route;
  children: ComponentChildren;
  class?: string;
  'aria-label'?: string;
  'aria-current'?: 'page' | undefined;
  title?: string;
  tabIndex?: number;
}) {
  const { to, children, ...rest } = props;
  const href = formatRoute(to);
  return (
    <a
      {...rest}
      href={href}
      onClick={(event) => {
        if (event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey)
          return;
        event.preventDefault();
        navigate(href);
      }}
    >
      {children}
    </a>
  );
}
