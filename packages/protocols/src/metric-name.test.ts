import { describe, expect, it } from 'vitest';
import { toMetricName } from './metric-name.js';

describe('toMetricName', () => {
  it('keeps a name /ingest accepts as it is', () => {
    expect(toMetricName('system.cpu.utilization')).toEqual({
      ok: true,
      name: 'system.cpu.utilization',
    });
    expect(toMetricName('node_cpu:rate-5m')).toEqual({ ok: true, name: 'node_cpu:rate-5m' });
  });

  it('turns every character the pattern refuses into _, one per code point', () => {
    expect(toMetricName('disk/used %')).toEqual({ ok: true, name: 'disk_used__' });
    expect(toMetricName('temp°C🙂')).toEqual({ ok: true, name: 'temp_C_' });
  });

  it('puts _ in front of a name that starts with a character allowed only later', () => {
    expect(toMetricName('1m_load')).toEqual({ ok: true, name: '_1m_load' });
    expect(toMetricName('.hidden')).toEqual({ ok: true, name: '_.hidden' });
  });

  it('gives a reason for what rewriting cannot fix', () => {
    expect(toMetricName('')).toEqual({ ok: false, reason: 'no_metric_name' });
    expect(toMetricName('a'.repeat(129))).toEqual({ ok: false, reason: 'metric_name_too_long' });
    expect(toMetricName('__proto__')).toEqual({ ok: false, reason: 'invalid_metric_name' });
  });

  it('accepts a name of exactly 128 characters', () => {
    expect(toMetricName('a'.repeat(128)).ok).toBe(true);
  });
});
