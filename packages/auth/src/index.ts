export type { ApiKeyAuthenticator, AuthenticatedKey } from './api-key-authenticator.js';
export { apiKeyFromHeaders, createApiKeyAuthenticator } from './api-key-authenticator.js';
export type { Scope } from './scope.js';
export { hasScope } from './scope.js';
