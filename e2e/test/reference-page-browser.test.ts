// GET /docs in headless Chromium with every request to anywhere but the service refused: the
// operation list and the notification callbacks render, and the page breaks none of its own
// Content-Security-Policy. Skipped where Chromium is not installed (e2e/src/browser.ts: in CI a
// missing browser fails it). SCREENSHOT_DIR=docs/images writes docs-page.png.
import { join } from 'node:path';
import t from 'tap';
import { startService } from '../src/index.js';
import { browserSkip, launchChromium } from '../src/browser.js';

t.test('the reference page in Chromium', { skip: browserSkip(t) }, async (t) => {
  const service = await startService();
  t.teardown(() => service.close());
  const browser = await launchChromium(t);
  const operationCount = Object.values(
    (await service.get('/doc', { key: null })).body.paths as Record<string, object>,
  ).reduce((sum, item) => sum + Object.keys(item).length, 0);

  async function openReference(hash = '') {
    const context = await browser.newContext({ viewport: { width: 1280, height: 900 } });
    const elsewhere: string[] = [];
    // Offline but for the service: anything else is refused and remembered.
    await context.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${service.url}/`) || url.startsWith('data:')) return route.continue();
      elsewhere.push(url);
      return route.abort('internetdisconnected');
    });
    const page = await context.newPage();
    // Injected by the browser driver, not by the page, so the page's CSP does not apply to it.
    await page.addInitScript(`window.cspViolations = [];
      document.addEventListener('securitypolicyviolation', (e) => window.cspViolations.push(e.violatedDirective + ' ' + e.blockedURI));`);
    const errors: string[] = [];
    page.on('pageerror', (err) => errors.push(err.message));
    await page.goto(`${service.url}/docs${hash}`);
    await page.locator('.opblock').first().waitFor({ timeout: 30_000 });
    return { context, page, elsewhere, errors, violations: () => page.evaluate<string[]>('window.cspViolations') };
  }

  t.test('the operation list renders from /doc, offline, within the CSP', async (t) => {
    const { context, page, elsewhere, errors, violations } = await openReference();
    t.teardown(() => context.close());
    t.equal(await page.locator('.opblock').count(), operationCount, `${operationCount} operations listed`);
    t.match(await page.locator('.opblock-summary-path').allInnerTexts(), ['/health'], 'paths shown');
    t.ok(await page.getByText('/{opcoId}/factures').first().isVisible(), 'POST /{opcoId}/factures listed');
    t.same(elsewhere, [], 'no request left the service');
    t.same(await violations(), [], 'no Content-Security-Policy violation');
    t.same(errors, [], 'no script error');
  });

  t.test('an operation shows its example body; POST /webhooks shows one callback per event', async (t) => {
    const { context, page, elsewhere, violations } = await openReference('#/webhooks/createWebhook');
    t.teardown(() => context.close());
    const webhook = page.locator('#operations-webhooks-createWebhook');
    await webhook.getByText('https://erp.cfa-exemple.fr/opco-events').first().waitFor();
    await webhook.locator('.tab-header').getByText('Callbacks', { exact: true }).click();
    await webhook.getByText('job.completed', { exact: true }).first().waitFor();
    t.ok(await webhook.getByText('webhook.disabled', { exact: true }).first().isVisible(), 'every event type');
    t.same(elsewhere, []);
    t.same(await violations(), []);
  });

  t.test('screenshot of the operation list', async (t) => {
    const { context, page } = await openReference();
    t.teardown(() => context.close());
    const dir = process.env.SCREENSHOT_DIR;
    const image = await page.screenshot({ fullPage: true, ...(dir ? { path: join(dir, 'docs-page.png') } : {}) });
    t.ok(image.length > 10_000, `${image.length} bytes of PNG`);
  });
});
