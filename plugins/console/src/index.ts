/**
 * The `console` feature plugin (P9): serves the operator console, a page built at `npm run build`
 * (ui/, bundled by esbuild into dist/ui/) that reads the operator API under /admin. The page and
 * its files need no key; the page asks for the operator key and sends it with its calls. A strict
 * Content-Security-Policy lets the page load only its own script and style sheet and talk only
 * to this service, and no other site may frame it.
 */
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { ConfigError, definePlugin, type PluginApi } from '@opco-proxy/core';

export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const ASSETS = new URL('../ui/', import.meta.url);

interface Asset {
  text: string;
  type: string;
}

function readAsset(file: string, type: string): Asset {
  const path = fileURLToPath(new URL(file, ASSETS));
  try {
    return { text: readFileSync(path, 'utf8'), type };
  } catch {
    throw new ConfigError(
      `invalid configuration: plugins: the console's page is not built (${path} is missing); run npm run build`,
    );
  }
}

export function registerConsole(api: PluginApi): void {
  if (api.role === 'worker') return;
  const page = readAsset('index.html', 'text/html; charset=utf-8');
  const script = readAsset('app.js', 'text/javascript; charset=utf-8');
  const style = readAsset('app.css', 'text/css; charset=utf-8');
  const answer = (asset: Asset) => () => ({
    status: 200 as const,
    body: asset.text,
    headers: {
      'Content-Type': asset.type,
      'Content-Security-Policy': CONTENT_SECURITY_POLICY,
      'X-Content-Type-Options': 'nosniff',
      'Referrer-Policy': 'no-referrer',
      'Cache-Control': 'no-store',
    },
  });
  api.route('getConsole', answer(page));
  api.route('getConsoleScript', answer(script));
  api.route('getConsoleStyle', answer(style));
}

export default definePlugin({ name: 'console', register: registerConsole });
