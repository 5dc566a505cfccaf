import { formatIssuePath, validationError } from '@monitor/platform';
import type { BodyParseResult } from '@monitor/schemas';

/** The parsed body, or a 422 whose `errors[].path` points into the body (`channels[1]`). */
export function bodyOrThrow<T>(result: BodyParseResult<T>): T {
  if (result.success) return result.data;
  throw validationError(
    result.issues.map((issue) => ({ path: formatIssuePath(issue.path), message: issue.message })),
  );
}
