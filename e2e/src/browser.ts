/**
 * Headless Chromium for the browser tests (the console, the reference page): Debian's `chromium`
 * package, driven by playwright-core (which downloads no browser of its own). Locally a test is
 * skipped, and says why, when the browser is not installed; in CI (`CI` set) a missing browser
 * fails it instead, since .ci/run installs it. Tests import this module directly, not through
 * index.ts, so that only they load playwright-core, a devDependency.
 */
import { existsSync, mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Test } from 'tap';
import { chromium, type Browser, type Page } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

const IMAGES = fileURLToPath(new URL('../../../docs/images/', import.meta.url));

/**
 * The `skip` option of a browser test: why it cannot run here, or undefined when it can. In CI a
 * missing browser fails `t` instead of skipping quietly: a skip there would hide a broken runner.
 */
export function browserSkip(t: Test): string | undefined {
  if (existsSync(CHROMIUM_PATH)) return undefined;
  if (process.env.CI) {
    t.fail(`${CHROMIUM_PATH} is missing: CI must run the browser tests (.ci/run installs the chromium package)`);
    return 'failed above';
  }
  return `${CHROMIUM_PATH} is not installed (apt-get install chromium): the browser tests are skipped on this machine`;
}

/** A fresh headless Chromium, closed when `t` ends. */
export async function launchChromium(t: Test): Promise<Browser> {
  // --no-sandbox: CI runs as root, where Chromium's own sandbox cannot start.
  const browser = await chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox'] });
  t.teardown(() => browser.close());
  return browser;
}

export interface ChromiumPage {
  page: Page;
  /** Script errors and console errors the page reported: a Content-Security-Policy violation is one. */
  problems: string[];
}

/**
 * A page in a fresh Chromium, closed when `t` ends. Tap runs teardowns last registered first, so
 * a service whose teardown a test registers before this call closes after the browser.
 */
export async function openChromiumPage(t: Test): Promise<ChromiumPage> {
  const page = await (await launchChromium(t)).newPage({ viewport: { width: 1440, height: 900 } });
  const problems: string[] = [];
  // Failed requests are expected (a wrong key's 401s, the browser's own favicon.ico); a script
  // error or a Content-Security-Policy violation is not.
  page.on(
    'console',
    (message) =>
      message.type() === 'error' &&
      !message.text().startsWith('Failed to load resource') &&
      problems.push(message.text()),
  );
  page.on('pageerror', (err) => problems.push(err.message));
  return { page, problems };
}

/** With SCREENSHOTS=1 (npm run screenshots), the whole page as docs/images/console-`name`.png. */
export async function consoleScreenshot(page: Page, name: string): Promise<void> {
  if (process.env.SCREENSHOTS !== '1') return;
  mkdirSync(IMAGES, { recursive: true });
  await page.screenshot({ path: `${IMAGES}console-${name}.png`, fullPage: true });
}
