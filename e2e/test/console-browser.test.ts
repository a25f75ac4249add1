// The operator console in headless Chromium (P9): it loads under its CSP, takes the operator key,
// shows a failed job with its error, and a click on Resend makes the receiver get the delivery.
// SCREENSHOTS=1 also writes docs/images/console-*.png (npm run screenshots).
import t from 'tap';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { ADMIN_KEY, KEY_B, TENANT_B, eventually, startOperatorScene } from '../src/index.js';
import { browserSkip, launchChromium } from '../src/browser.js';

const IMAGES = fileURLToPath(new URL('../../../docs/images/', import.meta.url));
const screenshots = process.env.SCREENSHOTS === '1';

async function snap(page: Page, name: string): Promise<void> {
  if (!screenshots) return;
  mkdirSync(IMAGES, { recursive: true });
  await page.screenshot({ path: `${IMAGES}console-${name}.png`, fullPage: true });
}

async function open(page: Page, section: string): Promise<void> {
  await page.getByRole('link', { name: section, exact: true }).click();
  await page.getByRole('heading', { level: 2 }).first().waitFor();
}

let skip: string | undefined;
try {
  skip = browserSkip();
} catch (err) {
  t.fail((err as Error).message);
  skip = 'failed above';
}

t.test('the operator console in Chromium', { skip }, async (t) => {
  const scene = await startOperatorScene({ slowListeMs: 6000 });
  const browser = await launchChromium();
  t.teardown(async () => {
    await browser.close();
    await scene.close();
  });
  const page = await browser.newPage({ viewport: { width: 1440, height: 900 } });
  const problems: string[] = [];
  // Failed requests are expected (the wrong key's 401s, the browser's own favicon.ico); a script
  // error or a Content-Security-Policy violation is not.
  page.on(
    'console',
    (message) =>
      message.type() === 'error' &&
      !message.text().startsWith('Failed to load resource') &&
      problems.push(message.text()),
  );
  page.on('pageerror', (err) => problems.push(err.message));

  const answer = await page.goto(`${scene.service.url}/console`);
  t.equal(answer?.status(), 200, 'the page needs no key');
  t.match(answer?.headers()['content-security-policy'], /default-src 'none'; script-src 'self'/, 'under a strict CSP');

  await page.getByLabel('Operator key').fill('not-the-operator-key-000000000000000');
  await page.getByRole('button', { name: 'Open the console' }).click();
  await page.getByRole('alert').filter({ hasText: 'The key was refused' }).waitFor();
  t.pass('a wrong key is refused and asked for again');
  await snap(page, 'key');

  await page.getByLabel('Operator key').fill(ADMIN_KEY);
  await page.getByRole('button', { name: 'Open the console' }).click();
  const job = page.locator(`tr[data-job-id="${scene.failedJob.jobId}"]`);
  await job.waitFor();
  const jobText = await job.innerText();
  t.match(jobText, /failed/, 'the failed job');
  t.match(jobText, /UPSTREAM_ERROR/, 'with its error code');
  t.match(
    jobText,
    new RegExp(scene.failedJob.error.message.slice(0, 20).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')),
    'and its message',
  );
  await job.getByText('Upstream answer').click();
  t.match(await job.innerText(), /montant incohérent avec le dossier/, 'and the upstream answer');
  await snap(page, 'jobs');

  await open(page, 'Syncs and pollers');
  const sync = page.locator(`tr[data-sync-id="${scene.runningSyncId}"]`);
  await sync.waitFor();
  t.match(await sync.innerText(), /processing/, 'the running sync');
  t.equal(await sync.locator('progress').count(), 1, 'with its progress bar');
  await page.getByRole('heading', { name: 'Pollers' }).waitFor();
  await snap(page, 'syncs');

  await open(page, 'Upstreams');
  await page.locator('article[data-opco-id="sandbox"]').waitFor();
  t.match(await page.locator('article[data-opco-id="sandbox"]').innerText(), /store-budget/);
  t.match(
    await page.locator('article[data-opco-id="sandbox"]').innerText(),
    /Unproven keys' slice\s+[1-9]\d* of \d+ used/,
    "the slice unproven keys used (the tenants' first calls)",
  );
  t.equal(await page.getByLabel('unproven slice used for sandbox').count(), 1, 'with its bar');
  await snap(page, 'upstreams');

  await open(page, 'Queues');
  await page.locator('tr[data-queue="webhook-deliveries"]').waitFor();
  await snap(page, 'queues');

  await open(page, 'Deliveries');
  const delivery = page.locator(`tr[data-delivery-id="${scene.deliveryId}"]`);
  await delivery.waitFor();
  t.match(
    await delivery.innerText(),
    /job\.failed[\s\S]*failed[\s\S]*500/,
    "the failed delivery, its event and the receiver's 500",
  );
  await snap(page, 'deliveries');

  scene.receiver.fallback = { status: 200 };
  const before = scene.receiver.received.length;
  await delivery.getByRole('button', { name: 'Resend' }).click();
  await page.getByRole('status').filter({ hasText: 'on its way again' }).waitFor();
  const resent = await eventually(
    () =>
      scene.receiver.received.slice(before).find((request) => request.headers['svc-delivery-id'] === scene.deliveryId),
    'the receiver to get the delivery sent again from the console',
    15_000,
  );
  t.equal(resent.body.event, 'job.failed');
  t.equal(resent.body.data.jobId, scene.failedJob.jobId);

  // D32: the resend is in the audit records, with every tenant's changes, 50 to a page.
  for (let i = 0; i < 30; i++) {
    const hook = await scene.service.request('POST', '/webhooks', {
      key: KEY_B,
      body: { callbackUrl: `http://127.0.0.1:9/audit-${i}`, events: ['job.completed'] },
    });
    if (
      hook.status !== 201 ||
      (await scene.service.request('DELETE', `/webhooks/${hook.body.id}`, { key: KEY_B })).status !== 200
    )
      t.fail(`webhook ${i}: ${hook.text}`);
  }
  await open(page, 'Audit');
  const rows = page.locator('tr[data-audit-id]');
  await page.getByLabel('Actor').selectOption('operator');
  const rowCount = (expected: (count: number) => boolean, what: string) =>
    eventually(async () => expected(await rows.count()), what, 10_000);
  await eventually(
    async () => (await rows.allInnerTexts()).some((text) => text.includes('resendAdminDelivery')),
    "the operator's resend",
    10_000,
  );
  t.equal(await rows.count(), 1, "filtered to the operator's actions");
  t.match(
    await rows.first().innerText(),
    /operator[\s\S]*resendAdminDelivery[\s\S]*deliveryId[\s\S]*202/,
    "the operator's resend, with its delivery and outcome",
  );
  await page.getByLabel('Actor').selectOption('');
  await rowCount((n) => n === 50, 'a page of 50');
  t.pass('every record, a page of 50');
  await page.getByRole('button', { name: 'Next page' }).click();
  await page.getByRole('button', { name: 'First page' }).waitFor();
  await rowCount((n) => n > 0 && n < 50, 'the rest on the next page');
  t.pass('the next page');
  await page.getByRole('button', { name: 'First page' }).click();
  await page.getByRole('textbox', { name: 'Tenant' }).fill(TENANT_B);
  await page.getByRole('textbox', { name: 'Action' }).fill('deleteWebhook');
  await rowCount((n) => n === 30, 'the 30 deletions of tenant B');
  t.pass('filtered by tenant and action: the 30 deletions');
  await snap(page, 'audit');
  t.same(problems, [], 'no error in the page (a CSP violation would be one)');
});
