import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import express from 'express';
import type { Express, Response } from 'express';
import { methodNotAllowedHandler, notFound } from '@monitor/platform';

/**
 * The web console's paths: index.html at `/` and at each client route (so a deep link survives
 * a reload), the built assets under `/console/assets/`. Kept in step with the console's
 * `routes.ts`; anything else stays the API's 404.
 */
const consoleRoutes = [
  '/',
  '/services',
  '/services/:id',
  '/alerts',
  '/rules',
  '/rules/:id',
  '/investigations',
  '/investigations/:id',
  '/silences',
] as const;

const assetsPath = '/console/assets';

/**
 * Scripts, styles, images and requests from this origin only: no inline script or style
 * element, no third-party origin, no framing, no plugins, forms post here only.
 */
export const consoleContentSecurityPolicy = [
  "default-src 'self'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "connect-src 'self'",
  "object-src 'none'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join('; ');

function setSecurityHeaders(res: Response): void {
  res.setHeader('Content-Security-Policy', consoleContentSecurityPolicy);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('X-Frame-Options', 'DENY');
  res.setHeader('Cross-Origin-Opener-Policy', 'same-origin');
}

/** The console package's build output (`packages/console/dist`), wherever it is installed. */
export function defaultConsoleDir(): string {
  const manifest = fileURLToPath(import.meta.resolve('@monitor/console/package.json'));
  return path.join(path.dirname(manifest), 'dist');
}

/**
 * Serves the built console from `distDir` on an express app (the `api` role's, or `all`'s):
 * index.html `no-cache` (revalidated on every load, so a new build is picked up at once),
 * the content-hashed assets `immutable` for a year. No API key is needed to load it: it
 * holds no data. Without a build, those paths answer 404 saying how to build it.
 */
export function createConsoleMount(distDir: string = defaultConsoleDir()): (app: Express) => void {
  // Read on every load (half a kilobyte, from the page cache): a rebuild's new asset names are
  // served at once, never an index naming assets the build removed.
  const indexFile = path.join(distDir, 'index.html');
  const assets = express.static(path.join(distDir, 'assets'), {
    index: false,
    immutable: true,
    maxAge: '365d',
    redirect: false,
    setHeaders: setSecurityHeaders,
  });
  return (app) => {
    app.use(assetsPath, (req, res, next) => {
      if (req.method !== 'GET' && req.method !== 'HEAD') {
        next();
        return;
      }
      assets(req, res, next);
    });
    for (const route of consoleRoutes) {
      app
        .route(route)
        .get(async (_req, res) => {
          let html: Buffer;
          try {
            html = await readFile(indexFile);
          } catch {
            throw notFound('the web console (not built here: run `npm run build`)');
          }
          setSecurityHeaders(res);
          res.setHeader('Cache-Control', 'no-cache');
          res.type('html').send(html);
        })
        .all(methodNotAllowedHandler(['GET']));
    }
  };
}
