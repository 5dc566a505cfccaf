import { useEffect, useState } from 'preact/hooks';

/** Routes that arrive with the alerting work: the console offers them once the API has them. */
export type Capabilities = { acknowledge: boolean; silences: boolean };

let cached: Promise<Capabilities> | undefined;

/** Read from the API's own OpenAPI document (public), once per page load. */
function loadCapabilities(): Promise<Capabilities> {
  cached ??= fetch('/api/v1/openapi.json', { credentials: 'omit' })
    .then((response) =>
      response.ok ? (response.json() as Promise<{ paths?: object }>) : { paths: {} },
    )
    .then((document) => {
      const paths = Object.keys(document.paths ?? {});
      return {
        acknowledge: paths.some((path) => /^\/api\/v1\/alerts\/\{[^}]+\}\/acknowledge$/.test(path)),
        silences: paths.includes('/api/v1/silences'),
      };
    })
    .catch(() => ({ acknowledge: false, silences: false }));
  return cached;
}

export function useCapabilities(): Capabilities | undefined {
  const [capabilities, setCapabilities] = useState<Capabilities | undefined>();
  useEffect(() => {
    void loadCapabilities().then(setCapabilities);
  }, []);
  return capabilities;
}
