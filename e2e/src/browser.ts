/**
 * Headless Chromium for the console's browser test: Debian's `chromium` package, driven by
 * playwright-core (which downloads no browser of its own). Locally the test is skipped, and says
 * why, when the browser is not installed; in CI (`CI` set) a missing browser fails it instead,
 * since .ci/run installs it.
 */
import { existsSync } from 'node:fs';
import { chromium, type Browser } from 'playwright-core';

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

/** Why the browser test cannot run here (skip it), or undefined when it can; throws in CI without the browser. */
export function browserSkip(): string | undefined {
  if (existsSync(CHROMIUM_PATH)) return undefined;
  if (process.env.CI)
    throw new Error(
      `${CHROMIUM_PATH} is missing: CI must run the console's browser test (.ci/run installs the chromium package)`,
    );
  return `${CHROMIUM_PATH} is not installed (apt-get install chromium): the console's browser test is skipped on this machine`;
}

export function launchChromium(): Promise<Browser> {
  // --no-sandbox: CI runs as root, where Chromium's own sandbox cannot start.
  return chromium.launch({ executablePath: CHROMIUM_PATH, headless: true, args: ['--no-sandbox'] });
}
