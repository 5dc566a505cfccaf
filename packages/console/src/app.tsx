import { useEffect, useMemo, useRef, useState } from 'preact/hooks';
import type { ApiClient } from './api-client.js';
import { createApiClient } from './api-client.js';
import { AlertsView } from './views/alerts-view.js';
import { InvestigationView, InvestigationsView } from './views/investigations-view.js';
import { RuleView, RulesView } from './views/rules-view.js';
import { ServiceView } from './views/service-view.js';
import { ServicesView } from './views/services-view.js';
import { SilencesView } from './views/silences-view.js';
import { SignIn } from './views/sign-in.js';
import { Link, useRoute } from './navigation.js';
import type { Route } from './routes.js';
import { forgetApiKey, readApiKey, storeApiKey } from './session.js';

const sections: { route: Route; label: string; views: Route['view'][] }[] = [
  { route: { view: 'services' }, label: 'Services', views: ['services', 'service'] },
  { route: { view: 'alerts' }, label: 'Alerts', views: ['alerts'] },
  { route: { view: 'rules' }, label: 'Rules', views: ['rules', 'rule', 'new-rule'] },
  {
    route: { view: 'investigations' },
    label: 'Investigations',
    views: ['investigations', 'investigation'],
  },
  { route: { view: 'silences' }, label: 'Silences', views: ['silences'] },
];

export function App() {
  const [apiKey, setApiKey] = useState(readApiKey);
  const [signedOutBecause, setSignedOutBecause] = useState<string | undefined>();
  const { route, search } = useRoute();

  const api = useMemo(
    () =>
      apiKey === undefined
        ? undefined
        : createApiClient(apiKey, () => {
            forgetApiKey();
            setApiKey(undefined);
            setSignedOutBecause(
              'The API key was refused (401): it is unknown or was revoked. Sign in again.',
            );
          }),
    [apiKey],
  );

  if (api === undefined) {
    return (
      <SignIn
        message={signedOutBecause}
        onSignIn={(key) => {
          storeApiKey(key);
          setSignedOutBecause(undefined);
          setApiKey(key);
        }}
      />
    );
  }
  return (
    <div class="shell">
      <a class="skip-link" href="#main">
        Skip to content
      </a>
      <header class="top">
        <span class="brand">monitor</span>
        <nav aria-label="Sections">
          <ul>
            {sections.map((section) => (
              <li key={section.label}>
                <Link
                  to={section.route}
                  aria-current={section.views.includes(route.view) ? 'page' : undefined}
                >
                  {section.label}
                </Link>
              </li>
            ))}
          </ul>
        </nav>
        <button
          type="button"
          class="sign-out"
          onClick={() => {
            forgetApiKey();
            setSignedOutBecause('Signed out.');
            setApiKey(undefined);
          }}
        >
          Sign out
        </button>
      </header>
      <Main route={route} search={search} api={api} />
    </div>
  );
}

function Main(props: { route: Route; search: URLSearchParams; api: ApiClient }) {
  const { route, search, api } = props;
  const ref = useRef<HTMLElement>(null);
  const path = `${route.view}:${'id' in route ? route.id : ''}`;
  const first = useRef(true);
  // After an in-app navigation, focus moves to the new view so keyboard and screen-reader users
  // start there (not on the first load: the browser's own focus order applies).
  useEffect(() => {
    if (first.current) {
      first.current = false;
      return;
    }
    ref.current?.querySelector<HTMLElement>('h1')?.focus();
  }, [path]);
  return (
    <main id="main" ref={ref}>
      <View route={route} search={search} api={api} />
    </main>
  );
}

function View(props: { route: Route; search: URLSearchParams; api: ApiClient }) {
  const { route, search, api } = props;
  switch (route.view) {
    case 'services':
      return <ServicesView api={api} search={search} />;
    case 'service':
      return <ServiceView api={api} id={route.id} search={search} />;
    case 'alerts':
      return <AlertsView api={api} search={search} />;
    case 'rules':
      return <RulesView api={api} />;
    case 'rule':
      return <RuleView api={api} id={route.id} />;
    case 'new-rule':
      return <RuleView api={api} id={undefined} />;
    case 'investigations':
      return <InvestigationsView api={api} search={search} />;
    case 'investigation':
      return <InvestigationView api={api} id={route.id} />;
    case 'silences':
      return <SilencesView api={api} search={search} />;
    case 'not-found':
      return (
        <section>
          <h1 tabIndex={-1}>Not found</h1>
          <p>
            Nothing lives at <code>{route.path}</code>.{' '}
            <Link to={{ view: 'services' }}>Services</Link>
          </p>
        </section>
      );
  }
}
