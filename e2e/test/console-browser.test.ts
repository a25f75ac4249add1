// The operator console in headless Chromium (P9): it loads under its CSP, takes the operator key,
// shows a failed job with its error and, opened, its steps, upstream answer and audit records; a
// click on Resend makes the receiver get the delivery; a bulk retry filtered by opcoId and error
// code asks first, then sends back exactly the jobs it counted, which complete once the upstream
// recovers; a job's Retry button does the same for one, and tells a refusal (issue 42).
// SCREENSHOTS=1 also writes docs/images/console-*.png (npm run screenshots).
import t, { type Test } from 'tap';
import type { Page } from 'playwright-core';
import {
  ADMIN_KEY,
  COMMON,
  KEY_B,
  TENANT_A,
  TENANT_B,
  eventually,
  factureBody,
  startOperatorScene,
  waitForJob,
  type OperatorScene,
} from '../src/index.js';
import { browserSkip, consoleScreenshot, openChromiumPage } from '../src/browser.js';

/** The page of one job, as its link in the Jobs section opens it. */
async function showJob(page: Page, jobId: string): Promise<void> {
  await page.evaluate(`location.hash = ${JSON.stringify(`jobs/${jobId}`)}`);
}

async function open(page: Page, section: string): Promise<void> {
  await page.getByRole('link', { name: section, exact: true }).click();
  await page.getByRole('heading', { level: 2 }).first().waitFor();
}

t.test('the operator console in Chromium', { skip: browserSkip(t) }, async (t) => {
  // `other`: a second upstream body, so that a bulk retry's opcoId filter has jobs to leave out.
  const scene = await startOperatorScene({ slowListeMs: 6000, opcos: { other: {} } });
  t.teardown(() => scene.close());
  const { page, problems } = await openChromiumPage(t);

  const answer = await page.goto(`${scene.service.url}/console`);
  t.equal(answer?.status(), 200, 'the page needs no key');
  t.match(answer?.headers()['content-security-policy'], /default-src 'none'; script-src 'self'/, 'under a strict CSP');

  await page.getByLabel('Operator key').fill('not-the-operator-key-000000000000000');
  await page.getByRole('button', { name: 'Open the console' }).click();
  await page.getByRole('alert').filter({ hasText: 'The key was refused' }).waitFor();
  t.pass('a wrong key is refused and asked for again');
  await consoleScreenshot(page, 'key');

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
  await consoleScreenshot(page, 'jobs');

  // Issue 42: the job, opened.
  await job.getByRole('link', { name: 'post-facture' }).click();
  const opened = page.locator('section[aria-labelledby="job-title"]');
  await opened.getByRole('heading', { name: 'Error' }).waitFor();
  const openedText = await opened.innerText();
  t.match(openedText, /Type\s+post-facture\s+opcoId\s+sandbox\s+Tenant\s+([0-9a-f]{64})/, 'its type and opcoId');
  t.ok(openedText.includes(TENANT_A), "its tenant's whole hash");
  t.match(openedText, /UPSTREAM_ERROR/, 'its error code');
  t.match(
    await opened.locator('pre.upstream-answer').innerText(),
    /"message": "montant incohérent avec le dossier"/,
    "the upstream's answer, as JSON",
  );
  t.match(await opened.locator('tr[data-step="1"]').innerText(), /failed\s+1\s+no/, 'its step: failed, 1 attempt');
  // P23: the upstream refused its body (422), which it would refuse again: nothing was kept to retry.
  t.match(openedText, /It can no longer be retried: .*purged/, 'not retryable, and why');
  t.equal(await opened.getByRole('button', { name: 'Retry' }).count(), 0, 'so no Retry button');
  await eventually(
    async () => (await opened.locator('tr[data-audit-id]').allInnerTexts()).some((row) => /postFacture/.test(row)),
    'its audit record: the submission',
    10_000,
  );
  t.pass("its audit records: the tenant's submission");
  await consoleScreenshot(page, 'job');

  await open(page, 'Syncs and pollers');
  const sync = page.locator(`tr[data-sync-id="${scene.runningSyncId}"]`);
  await sync.waitFor();
  t.match(await sync.innerText(), /processing/, 'the running sync');
  t.equal(await sync.locator('progress').count(), 1, 'with its progress bar');
  await page.getByRole('heading', { name: 'Pollers' }).waitFor();
  await consoleScreenshot(page, 'syncs');

  await open(page, 'Upstreams');
  await page.locator('article[data-opco-id="sandbox"]').waitFor();
  t.match(await page.locator('article[data-opco-id="sandbox"]').innerText(), /store-budget/);
  t.match(
    await page.locator('article[data-opco-id="sandbox"]').innerText(),
    /Unproven keys' slice\s+[1-9]\d* of \d+ used/,
    "the slice unproven keys used (the tenants' first calls)",
  );
  t.equal(await page.getByLabel('unproven slice used for sandbox').count(), 1, 'with its bar');
  await consoleScreenshot(page, 'upstreams');

  await open(page, 'Queues');
  await page.locator('tr[data-queue="webhook-deliveries"]').waitFor();
  await consoleScreenshot(page, 'queues');

  await open(page, 'Deliveries');
  const delivery = page.locator(`tr[data-delivery-id="${scene.deliveryId}"]`);
  await delivery.waitFor();
  t.match(
    await delivery.innerText(),
    /job\.failed[\s\S]*failed[\s\S]*500/,
    "the failed delivery, its event and the receiver's 500",
  );
  await consoleScreenshot(page, 'deliveries');

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
  await consoleScreenshot(page, 'audit');

  const cut = await bulkRetry(t, page, scene);
  await retryOne(t, page, scene, cut);
  t.same(problems, [], 'no error in the page (a CSP violation would be one)');
});

/**
 * Issue 42: three jobs of `other` failed by an outage (503 on every attempt: UPSTREAM_ERROR, their
 * inputs kept for a retry), one of `other` with the same code whose body the upstream refused (422:
 * nothing kept), two of `other` cut off (NETWORK_ERROR: another code), and the scene's failed job
 * of `sandbox` (the same code, another opcoId). Retrying `other`'s UPSTREAM_ERROR jobs from the
 * page asks first, with the counts, then sends back exactly the three, which complete now that
 * the upstream is well again. Returns the two cut off.
 */
async function bulkRetry(t: Test, page: Page, scene: OperatorScene): Promise<string[]> {
  const { service } = scene;
  const { faults } = service.sandbox;
  const route = `POST ${COMMON.paths.factures}`;
  const numero = service.sandbox.dataset.dossiers[1].numeroInterne;
  const submit = async (expectedCode: string) => {
    const posted = await service.request('POST', '/other/factures', { body: factureBody(numero) });
    const failed = await waitForJob(service, posted.body.statusUrl);
    t.equal(failed.error?.code, expectedCode, `a job of other failed with ${expectedCode}`);
    return failed.jobId as string;
  };
  // First a refusal, which also proves the tenant's key to `other` (its later calls are not held
  // to the unproven keys' slice).
  faults.add({ route, status: 422, body: { message: 'numéro de facture déjà utilisé' }, times: 1 });
  const refused = await submit('UPSTREAM_ERROR');
  // Markup from the upstream is text on the page, never HTML.
  faults.add({ route, status: 503, body: { message: 'maintenance <img src=x class=injected>' } });
  const outage = [await submit('UPSTREAM_ERROR'), await submit('UPSTREAM_ERROR'), await submit('UPSTREAM_ERROR')];
  // The upstream recovers (the scene's slow listing goes too: its sync was looked at already).
  faults.clear();
  faults.add({ route, destroy: true });
  const cut = [await submit('NETWORK_ERROR'), await submit('NETWORK_ERROR')];
  faults.clear();
  const status = async (jobId: string) => (await scene.admin(`/admin/jobs/${jobId}`)).body.job.status as string;
  const others = [refused, ...cut, scene.failedJob.jobId];

  await showJob(page, outage[0]);
  const answer = page.locator('pre.upstream-answer');
  await answer.waitFor();
  t.match(await answer.innerText(), /"maintenance <img src=x class=injected>"/, "the upstream's markup as text");
  t.equal(await page.locator('img.injected').count(), 0, 'not as HTML');
  t.match(
    await page.locator('section[aria-labelledby="job-title"]').innerText(),
    /It can be retried until .+, when its sealed inputs are purged/,
    'failed by an outage: retryable, and until when',
  );

  await open(page, 'Jobs');
  await page.getByLabel('opcoId to retry').selectOption('other');
  await page.getByRole('textbox', { name: 'Error code' }).fill('UPSTREAM_ERROR');
  await page.getByRole('button', { name: 'Count matching jobs' }).click();
  const question = page.getByRole('alertdialog');
  await question.waitFor();
  t.match(
    await question.innerText(),
    /^Retry 3 failed jobs\? \(1 can no longer be retried: their inputs were purged\)/,
    'the question, with the counts',
  );
  t.same(await Promise.all([...outage, ...others].map(status)), Array(7).fill('failed'), 'counting changed nothing');
  await consoleScreenshot(page, 'bulk-retry');
  await question.getByRole('button', { name: 'Retry 3 jobs' }).click();
  const done = page.getByRole('status').filter({ hasText: 'sent back to pending' });
  await done.waitFor();
  t.match(await done.innerText(), /^3 jobs sent back to pending; 1 could not be retried/, 'what was retried');
  t.same((await done.locator('li').allInnerTexts()).sort(), [...outage].sort(), 'the three jobs of the outage');

  for (const [i, jobId] of outage.entries()) {
    const job = await waitForJob(service, `/other/jobs/${jobId}`, {
      until: (job) => job.status !== 'pending' && job.status !== 'processing',
    });
    t.equal(job.status, 'completed', `retried job ${i + 1} completed against the upstream, well again`);
    const records = (await scene.admin(`/admin/audit?jobId=${jobId}`)).body.items;
    t.same(
      records.filter((record: any) => record.action === 'retryAdminJobs').map((record: any) => record.actor),
      ['operator'],
      'with exactly one audit record of the retry',
    );
  }
  t.same(await Promise.all(others.map(status)), Array(4).fill('failed'), 'the jobs the filter leaves out stay failed');
  for (const jobId of others) {
    const records = (await scene.admin(`/admin/audit?jobId=${jobId}`)).body.items;
    t.notOk(
      records.some((record: any) => record.action === 'retryAdminJobs'),
      'and have no record of a retry',
    );
  }
  return cut;
}

/**
 * Issue 42: the Retry button of a job's page sends it back (a job cut off mid-call: its step is
 * uncertain), and a job that is no longer failed (the other one, retried meanwhile by another
 * operator) is refused with the service's reason.
 */
async function retryOne(t: Test, page: Page, scene: OperatorScene, cut: string[]): Promise<void> {
  const opened = page.locator('section[aria-labelledby="job-title"]');
  const retry = opened.getByRole('button', { name: 'Retry' });
  await showJob(page, cut[0]);
  await retry.waitFor();
  t.match(
    await opened.locator('tr[data-step="1"]').innerText(),
    /failed\s+\d+\s+yes: its last call may have reached the upstream unanswered/,
    'its step, uncertain',
  );
  await retry.click();
  await opened.getByRole('status').filter({ hasText: 'pending again' }).waitFor();
  await eventually(
    async () => (await opened.locator('#job-title .status').innerText()) === 'completed',
    'the page to show the job completed',
    15_000,
  );
  t.pass('Retry: the job completed');
  t.equal(await retry.count(), 0, 'a completed job has no Retry button');
  await eventually(
    async () => (await opened.locator('tr[data-audit-id]').allInnerTexts()).some((row) => /retryAdminJob\b/.test(row)),
    "the operator's retry among its audit records",
    10_000,
  );
  t.pass("the operator's retry among its audit records");

  await showJob(page, cut[1]);
  await retry.waitFor();
  t.equal((await scene.admin(`/admin/jobs/${cut[1]}/retry`, { method: 'POST' })).status, 202, 'retried elsewhere');
  await retry.click();
  const refusal = opened.getByRole('alert').filter({ hasText: 'was not retried' });
  await refusal.waitFor();
  t.match(
    await refusal.innerText(),
    /cannot be retried|changed meanwhile/,
    "a job no longer failed: the service's 409, told",
  );
}
