import { defineConfig } from 'vite';

/**
 * The console is served by the api role: index.html at `/` (and at every client route), the
 * hashed assets under `/console/assets/` with long-cache headers. Nothing is inlined: the
 * Content-Security-Policy allows scripts and styles from the same origin only.
 */
export default defineConfig({
  base: '/console/',
  build: {
    outDir: 'dist',
    emptyOutDir: true,
    assetsDir: 'assets',
    assetsInlineLimit: 0,
    modulePreload: { polyfill: false },
    target: 'es2022',
    sourcemap: false,
  },
});
