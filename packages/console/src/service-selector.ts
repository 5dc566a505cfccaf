/** A label value as a PromQL string literal: JSON's escapes are ones PromQL (Go) reads. */
const quoted = (value: string): string => JSON.stringify(value);

/**
 * The PromQL selector of a service's own series, to prefill the host view's PromQL box. Series
 * carry the labels they were written with: `/ingest`'s and those written with a `host` label or
 * tag have `host` = the service's name; a Prometheus target's have its `instance` (the service
 * is that instance without its port), which its newest sample's tags hold.
 */
export function serviceSelector(service: { name: string; tags: Record<string, string> }): string {
  const { instance } = service.tags;
  if (service.tags['host'] === undefined && instance !== undefined) {
    return `{instance=${quoted(instance)}}`;
  }
  return `{host=${quoted(service.name)}}`;
}
