import { validationError } from '@monitor/platform';
import type { QueryParseResult } from '@monitor/schemas';

/** The parsed query, or a 422 whose `errors[].path` is each offending parameter's name. */
export function queryOrThrow<T>(result: QueryParseResult<T>): T {
  if (result.success) return result.data;
  throw validationError(
    result.issues.map((issue) => ({ path: issue.parameter, message: issue.message })),
  );
}
