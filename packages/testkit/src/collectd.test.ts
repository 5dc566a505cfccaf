import { describe, expect, it } from 'vitest';
import { collectdConfig } from './collectd.js';

describe('collectdConfig', () => {
  const options = {
    writeHttpUrl: 'http://127.0.0.1:9/collectd',
    user: 'collectd',
    password: 'key',
  };

  it('keeps its base dir and pid file in the given dir', () => {
    const config = collectdConfig(options, '/tmp/monitor-testkit/collectd-x');
    expect(config).toContain('BaseDir "/tmp/monitor-testkit/collectd-x"\n');
    expect(config).toContain('PIDFile "/tmp/monitor-testkit/collectd-x/collectd.pid"\n');
  });

  it('loads the read plugins and write_http with JSON, rates and the credentials', () => {
    const config = collectdConfig({ ...options, hostname: 'web-1', intervalSeconds: 2 }, '/d');
    expect(config).toContain('Hostname "web-1"\n');
    expect(config).toContain('Interval 2\n');
    for (const plugin of ['cpu', 'memory', 'load', 'interface', 'write_http']) {
      expect(config).toContain(`LoadPlugin ${plugin}\n`);
    }
    expect(config).toMatch(
      /URL "http:\/\/127\.0\.0\.1:9\/collectd"\n\s+User "collectd"\n\s+Password "key"\n\s+Format "JSON"\n\s+StoreRates true\n/,
    );
  });

  it('escapes quotes and backslashes in strings', () => {
    const config = collectdConfig({ ...options, password: 'a"b\\c' }, '/d');
    expect(config).toContain('Password "a\\"b\\\\c"\n');
  });

  it('refuses a string with a line break, which would end the option', () => {
    expect(() => collectdConfig({ ...options, password: 'a\nLoadPlugin exec' }, '/d')).toThrow(
      /line break/,
    );
  });
});
