export type { ApiKeyAuthenticator, AuthenticatedKey } from './api-key-authenticator.js';
export { createApiKeyAuthenticator } from './api-key-authenticator.js';
export type { RenderKeyRefusal } from './require-scope.js';
export { authenticatedKey, requireScope } from './require-scope.js';
export type { Scope } from './scope.js';
