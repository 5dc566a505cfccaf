import { describe, expect, it } from 'vitest';
import { hostOfInstance, isStaleMarker } from './prometheus-series.js';

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
