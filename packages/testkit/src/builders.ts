// Test builders and the API-calling helper (`@monitor/testkit/builders`): no service launchers,
// so unit tests import them without starting or loading any real service.
export type { ApiCall, ApiExchange, ApiReply, ApiRequest } from './api-call.js';
export { createApiCall } from './api-call.js';
export { buildAlert, buildAlertResponse } from './alert.js';
export { buildAlertRuleCreateRequest, buildAlertRuleDraft } from './alert-rule-draft.js';
export { buildHostSample } from './host-sample.js';
export { buildSampleMessage } from './sample-message.js';
export { problemBody } from './problem-body.js';
export { uniqueOrgId } from './unique-org-id.js';
export { waitFor } from './wait-for.js';
// The platform logger writing into memory; it lives in platform, whose own tests use it too.
export { createMemoryLogger } from '@monitor/platform/testing';
