import { describe, expect, it } from 'vitest';
import { serviceSelector } from './service-selector.js';

describe('serviceSelector', () => {
  it('selects by host for /ingest services and series written with a host label', () => {
    expect(serviceSelector({ name: 'web-1', tags: { env: 'prod' } })).toBe('{host="web-1"}');
    expect(serviceSelector({ name: 'web-1', tags: { host: 'web-1', instance: 'x:1' } })).toBe(
      '{host="web-1"}',
    );
  });

  it('selects a Prometheus target by its instance, the label its series carry', () => {
    expect(
      serviceSelector({ name: '10.0.0.1', tags: { instance: '10.0.0.1:9100', job: 'node' } }),
    ).toBe('{instance="10.0.0.1:9100"}');
  });
});
