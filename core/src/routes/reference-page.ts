/**
 * GET /docs: the document of /doc as a browsable API reference. Swagger UI (the swagger-ui-dist
 * package: one self-contained script and one style sheet, no dependencies of its own) renders it
 * in the browser; the service serves those files itself from node_modules, so the page works
 * without the internet and tells no third party who reads it. Nothing is inline, which lets the
 * page carry a strict Content-Security-Policy: scripts, styles and requests to this origin only.
 */
import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { createError } from '../errors/errors.js';
import type { OperationRouter } from '../http/operation-router.js';

const ASSETS_PATH = '/docs/assets/';

export const REFERENCE_PAGE_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  // Swagger UI's style sheet draws its icons as data: images.
  "img-src 'self' data:",
  // /doc, and the requests of "Try it out".
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

/** Starts Swagger UI on the page's element; a file, not an inline script, so the CSP stays strict. */
const START_SCRIPT = `'use strict';
(function () {
  var root = document.getElementById('reference');
  window.ui = SwaggerUIBundle({
    url: root.getAttribute('data-document'),
    domNode: root,
    deepLinking: true,
    // The default sends the document to validator.swagger.io; the page talks to this service only.
    validatorUrl: null,
    docExpansion: 'list',
    defaultModelsExpandDepth: 0,
    displayRequestDuration: true,
    showExtensions: false,
  });
})();
`;

const PAGE_STYLE = `body { margin: 0; background: #fafafa; }
.reference-header { padding: 12px 20px; font: 14px sans-serif; color: #3b4151; border-bottom: 1px solid #e3e3e3; background: #fff; }
`;

const PAGE = `<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>opco-proxy API reference</title>
<link rel="icon" href="data:,">
<link rel="stylesheet" href="${ASSETS_PATH}swagger-ui.css">
<link rel="stylesheet" href="${ASSETS_PATH}reference.css">
</head>
<body>
<noscript><p class="reference-header">This page needs JavaScript; the OpenAPI document itself is at <a href="/doc">/doc</a>.</p></noscript>
<div id="reference" data-document="/doc"></div>
<script src="${ASSETS_PATH}swagger-ui-bundle.js"></script>
<script src="${ASSETS_PATH}reference.js"></script>
</body>
</html>
`;

interface Asset {
  type: string;
  /** A file of swagger-ui-dist, or the text itself. */
  file?: string;
  text?: string;
}

const ASSETS: Record<string, Asset> = {
  'swagger-ui-bundle.js': { type: 'text/javascript; charset=utf-8', file: 'swagger-ui-bundle.js' },
  'swagger-ui.css': { type: 'text/css; charset=utf-8', file: 'swagger-ui.css' },
  'reference.js': { type: 'text/javascript; charset=utf-8', text: START_SCRIPT },
  'reference.css': { type: 'text/css; charset=utf-8', text: PAGE_STYLE },
};

const COMMON_HEADERS = { 'X-Content-Type-Options': 'nosniff', 'Referrer-Policy': 'no-referrer' };

export function mountReferencePage(router: OperationRouter): void {
  // Read on first use, then kept: about 2 MB, and only processes that serve the page pay it.
  const loaded = new Map<string, Promise<Buffer>>();
  const distDir = dirname(createRequire(import.meta.url).resolve('swagger-ui-dist/absolute-path.js'));

  router.mount(
    'getReferencePage',
    () => ({
      status: 200,
      body: PAGE,
      headers: {
        ...COMMON_HEADERS,
        'Content-Type': 'text/html; charset=utf-8',
        'Content-Security-Policy': REFERENCE_PAGE_CSP,
      },
    }),
    'kernel',
  );

  router.mount(
    'getReferenceAsset',
    async ({ params }) => {
      const name = params.asset;
      const asset = Object.hasOwn(ASSETS, name) ? ASSETS[name] : undefined;
      if (!asset) throw createError('NOT_FOUND', `no asset ${name} on the reference page`);
      let body: Promise<Buffer> | undefined = loaded.get(name);
      if (!body) {
        body = asset.file ? readFile(join(distDir, asset.file)) : Promise.resolve(Buffer.from(asset.text!, 'utf8'));
        body.catch(() => loaded.delete(name));
        loaded.set(name, body);
      }
      return {
        status: 200,
        body: await body,
        headers: { ...COMMON_HEADERS, 'Content-Type': asset.type, 'Cache-Control': 'public, max-age=3600' },
      };
    },
    'kernel',
  );
}
