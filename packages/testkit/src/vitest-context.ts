import { inject } from 'vitest';
import type { ServiceName } from './service.js';

declare module 'vitest' {
  export interface ProvidedContext {
    /** URLs of the services the integration run started or was given, by service name. */
    serviceUrls: Partial<Record<ServiceName, string>>;
  }
}

/**
 * The URL of a service inside an integration test. The file must declare what it needs in a
 * `// @services <name> ...` comment, which the global setup reads to start only those.
 */
export function serviceUrl(name: ServiceName): string {
  const url = inject('serviceUrls')[name];
  if (url === undefined) {
    throw new Error(
      `service '${name}' was not started: declare it in the test file with a '// @services ${name}' comment`,
    );
  }
  return url;
}
