export { createInvestigator } from './investigator.js';
export { createChatCompletionsNarrator } from './chat-completions-narrator.js';
export { createInvestigatorMetrics } from './investigator-metrics.js';
