import { once } from 'node:events';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createLogger, createMetrics } from '@monitor/platform';
import { consoleContentSecurityPolicy, createConsoleMount } from './console-static.js';
import { createRoleApp } from './ops-app.js';

/** A role app serving a console build made here: an index and one hashed asset. */
let distDir = '';
let baseUrl = '';
let server: Server;
const indexHtml =
  '<!doctype html><html><head><script type="module" src="/console/assets/index-AbC123.js"></script></head></html>';

async function serve(dir: string): Promise<{ server: Server; url: string }> {
  const app = createRoleApp({
    logger: createLogger({ level: 'silent' }),
    metrics: createMetrics({ defaultMetrics: false }),
    readiness: [],
    mount: createConsoleMount(dir),
  });
  const created = createServer(app);
  created.listen(0, '127.0.0.1');
  await once(created, 'listening');
  return { server: created, url: `http://127.0.0.1:${(created.address() as AddressInfo).port}` };
}

async function close(each: Server): Promise<void> {
  each.closeAllConnections();
  await new Promise((resolve) => each.close(resolve));
}

beforeAll(async () => {
  distDir = await mkdtemp(path.join(tmpdir(), 'console-dist-'));
  await mkdir(path.join(distDir, 'assets'));
  await writeFile(path.join(distDir, 'index.html'), indexHtml);
  await writeFile(path.join(distDir, 'assets', 'index-AbC123.js'), 'console.log(1);\n');
  ({ server, url: baseUrl } = await serve(distDir));
});

afterAll(async () => {
  await close(server);
  await rm(distDir, { recursive: true, force: true });
});

describe('createConsoleMount', () => {
  it.each([
    '/',
    '/services',
    '/services/svc_01ABC',
    '/alerts',
    '/rules/new',
    '/rules/rul_1',
    '/investigations/inv_9',
    '/silences',
  ])(
    'answers GET %s with index.html, no-cache and the strict CSP, without a key',
    async (route) => {
      const response = await fetch(baseUrl + route);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-type')).toMatch(/^text\/html/);
      expect(response.headers.get('cache-control')).toBe('no-cache');
      expect(response.headers.get('content-security-policy')).toBe(consoleContentSecurityPolicy);
      expect(response.headers.get('x-content-type-options')).toBe('nosniff');
      expect(await response.text()).toBe(indexHtml);
    },
  );

  it('serves hashed assets for a year, immutable, with the CSP', async () => {
    const response = await fetch(`${baseUrl}/console/assets/index-AbC123.js`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/javascript/);
    expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
    expect(response.headers.get('content-security-policy')).toBe(consoleContentSecurityPolicy);
  });

  it('allows no inline script, no inline style and no other origin', () => {
    expect(consoleContentSecurityPolicy).toContain("default-src 'self'");
    expect(consoleContentSecurityPolicy).toContain("script-src 'self'");
    expect(consoleContentSecurityPolicy).not.toMatch(/unsafe-inline|unsafe-eval|https?:|\*/);
  });

  it('leaves an unknown asset, an unknown path and the index file itself to the 404 problem', async () => {
    for (const route of [
      '/console/assets/missing.js',
      '/nowhere',
      '/console/index.html',
      '/services/a/b',
    ]) {
      const response = await fetch(baseUrl + route);
      expect(response.status, route).toBe(404);
      expect(response.headers.get('content-type'), route).toMatch(/^application\/problem\+json/);
    }
  });

  it('answers another method on a console route with 405', async () => {
    const response = await fetch(`${baseUrl}/services`, { method: 'POST' });
    expect(response.status).toBe(405);
    expect(response.headers.get('allow')).toBe('GET, HEAD');
  });

  it('answers 404 saying how to build it when the console was not built', async () => {
    const empty = await mkdtemp(path.join(tmpdir(), 'console-none-'));
    const other = await serve(empty);
    try {
      const response = await fetch(`${other.url}/`);
      expect(response.status).toBe(404);
      expect(((await response.json()) as { detail: string }).detail).toContain('npm run build');
    } finally {
      await close(other.server);
      await rm(empty, { recursive: true, force: true });
    }
  });
});
