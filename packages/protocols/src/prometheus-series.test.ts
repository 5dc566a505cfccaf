import { describe, expect, it } from 'vitest';
import { hostOfInstance, hostOfLabels, isStaleMarker } from './prometheus-series.js';

describe('hostOfInstance', () => {
  it.each([
    ['node-1:9100', 'node-1'],
    ['10.0.0.7:9100', '10.0.0.7'],
    ['[2001:db8::1]:9100', '2001:db8::1'],
    ['[::1]', '::1'],
    ['node-1', 'node-1'],
    ['2001:db8::1', '2001:db8::1'],
    ['http://node-1:9100/metrics', 'http://node-1:9100/metrics'],
    ['node-1:http', 'node-1:http'],
  ])('reads %s as host %s', (instance, host) => {
    expect(hostOfInstance(instance)).toBe(host);
  });
});

describe('hostOfLabels', () => {
  it('takes the host label, else the instance without its port, else the job', () => {
    expect(hostOfLabels({ host: 'web-1', instance: 'node-1:9100' })).toBe('web-1');
    expect(hostOfLabels({ instance: 'node-1:9100', job: 'node' })).toBe('node-1');
    expect(hostOfLabels({ host: '', instance: '[::1]:9100' })).toBe('::1');
    expect(hostOfLabels({ job: 'node', rulegroup: 'g' })).toBe('node');
  });

  it('is undefined for a series of none of them', () => {
    expect(hostOfLabels({ rulegroup: 'g' })).toBeUndefined();
    expect(hostOfLabels({ instance: '', job: '' })).toBeUndefined();
  });
});

describe('isStaleMarker', () => {
  it('is true only for the NaN with bits 0x7ff0000000000002', () => {
    const view = new DataView(new ArrayBuffer(8));
    view.setBigUint64(0, 0x7ff0000000000002n, true);
    expect(isStaleMarker(view.getFloat64(0, true))).toBe(true);
    expect(isStaleMarker(Number.NaN)).toBe(false);
    expect(isStaleMarker(0)).toBe(false);
    expect(isStaleMarker(Number.POSITIVE_INFINITY)).toBe(false);
  });
});
