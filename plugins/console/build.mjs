#!/usr/bin/env node
/**
 * Builds the console page into dist/ui/: ui/main.tsx and everything it imports (preact included)
 * bundled by esbuild into one script, ui/console.css into one style sheet, and ui/index.html as
 * it is. Nothing is fetched at run time: the page works offline and under a strict CSP.
 */
import { copyFileSync, mkdirSync } from 'node:fs';
import { build } from 'esbuild';

const out = new URL('./dist/ui/', import.meta.url);
mkdirSync(out, { recursive: true });
await build({
  entryPoints: [
    { in: new URL('./ui/main.tsx', import.meta.url).pathname, out: 'app' },
    { in: new URL('./ui/console.css', import.meta.url).pathname, out: 'app' },
  ],
  outdir: out.pathname,
  bundle: true,
  format: 'esm',
  target: 'es2020',
  minify: true,
  sourcemap: false,
  jsx: 'automatic',
  jsxImportSource: 'preact',
  legalComments: 'eof',
  logLevel: 'warning',
});
copyFileSync(new URL('./ui/index.html', import.meta.url), new URL('index.html', out));
console.log('console page built into plugins/console/dist/ui/');
