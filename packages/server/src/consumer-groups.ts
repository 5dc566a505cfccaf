/**
 * The samples topic's consumer groups. The gateway of role `all` waits for both before it
 * answers, and the investigator waits for the writer's positions before it reads evidence.
 */
export const writerGroupId = 'writer';
export const evaluatorGroupId = 'evaluator';
