import { describe, expect, it } from 'vitest';
import { containerImage } from './container-images.js';
import { dockerPolicy } from './docker-probe.js';

describe('containerImage', () => {
  it('names the upstream image unless MONITOR_TESTKIT_<SERVICE>_IMAGE names another', () => {
    expect(containerImage('kafka', {})).toBe('apache/kafka:4.1.1');
    expect(containerImage('timescale', {})).toBe('timescale/timescaledb:2.28.3-pg15');
    const env = { MONITOR_TESTKIT_KAFKA_IMAGE: 'monitor-local/kafka:4.1.1-bookworm' };
    expect(containerImage('kafka', env)).toBe('monitor-local/kafka:4.1.1-bookworm');
    expect(containerImage('redis', env)).toBe('redis:7-alpine');
    expect(containerImage('postgres', { MONITOR_TESTKIT_POSTGRES_IMAGE: '  ' })).toBe(
      'postgres:15-alpine',
    );
  });
});

describe('dockerPolicy', () => {
  it('is never unless MONITOR_TESTKIT_DOCKER says auto or always', () => {
    expect(dockerPolicy({})).toBe('never');
    expect(dockerPolicy({ MONITOR_TESTKIT_DOCKER: 'never' })).toBe('never');
    expect(dockerPolicy({ MONITOR_TESTKIT_DOCKER: 'auto' })).toBe('auto');
    expect(dockerPolicy({ MONITOR_TESTKIT_DOCKER: 'always' })).toBe('always');
  });

  it('refuses a value it does not know, naming the three it does', () => {
    expect(() => dockerPolicy({ MONITOR_TESTKIT_DOCKER: 'yes' })).toThrow(/never, auto or always/);
  });
});
