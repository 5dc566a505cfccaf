import { createApiCall } from '@monitor/testkit/builders';

/** A `/prometheus/api/v1/query` or `query_range` answer as the tests read it. */
export type PrometheusAnswer = {
  status: number;
  body: {
    status: string;
    data: { result: { metric: Record<string, string>; values?: [number, string][] }[] };
    warnings?: string[];
    error?: string;
  };
};

/** GETs `/prometheus/api/v1/<path>` of the server at `baseUrl()` with `key`. */
export function prometheusQuery(
  baseUrl: () => string,
  key: string,
): (path: string, params: Record<string, string>) => Promise<PrometheusAnswer> {
  const call = createApiCall({ baseUrl, key });
  return async (path, params) =>
    await call<PrometheusAnswer['body']>(
      `/prometheus/api/v1/${path}?${new URLSearchParams(params).toString()}`,
    );
}

/** A range answer's values as numbers, to the digits an order of addition cannot change. */
export function roundedValues(answer: PrometheusAnswer): [number, number][][] {
  return answer.body.data.result.map((s) =>
    (s.values ?? []).map(([t, v]) => [t, Number(Number(v).toPrecision(12))]),
  );
}
