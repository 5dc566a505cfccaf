import { describe, expect, it } from 'vitest';
import { startNodeExporter } from './node-exporter.js';
import { isProcessAlive } from '@monitor/platform';

describe('startNodeExporter', () => {
  it('serves node metrics on 127.0.0.1 until stopped, then leaves no process behind', async () => {
    const exporter = await startNodeExporter();
    try {
      expect(exporter.address).toMatch(/^127\.0\.0\.1:\d+$/);
      const response = await fetch(exporter.metricsUrl);
      const body = await response.text();
      expect(response.status, exporter.tail()).toBe(200);
      expect(body).toMatch(/^node_load1 \d/m);
      // Debian enables the systemd collector, which fails on every scrape without systemd.
      expect(body).not.toContain('collector="systemd"');
    } finally {
      await exporter.stop();
    }
    expect(isProcessAlive(exporter.pid)).toBe(false);
    await expect(fetch(exporter.metricsUrl)).rejects.toThrow();
  });
});
