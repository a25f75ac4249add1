/**
 * D21, D22: after a sync with enablePoller, upstream changes become dossier.etat_changed,
 * dossier.updated and facture.etat_changed, delivered to a real local receiver; in front of either
 * upstream shape (pollers.test.ts, classic-pollers.test.ts). Polls are driven by a TestClock: each
 * interval is one advance of the clock, not seconds of waiting.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Test } from 'tap';
import { type DomainEvent } from '@opco-proxy/core';
import { TestClock } from '@opco-proxy/core/testing';
import { startSandbox } from '@opco-proxy/adapter-sandbox';
import { startService, KEY_A, KEY_B, type Service } from './harness.js';
import { deliveryLogs, eventually } from './eventually.js';
import { signatureValid, startReceiver } from './receiver.js';
import { watchSync } from './sync-client.js';
import { COMMON, type UpstreamShape } from './upstream-shapes.js';
import type { SyncConfig } from '@opco-proxy/plugin-sync';

const INTERVAL_MS = 60_000;

/** Moves the clock one polling interval on and waits until the poller has polled again. */
async function nextPoll(service: Service, clock: TestClock): Promise<void> {
  const before = (await service.get('/pollers')).body[0]?.lastPollAt;
  await clock.advance(INTERVAL_MS);
  await eventually(async () => {
    const poller = (await service.get('/pollers')).body[0];
    return poller && poller.lastPollAt !== before;
  }, 'a poll after the interval');
}

export function pollersSuite(t: Test, shape: UpstreamShape = COMMON): void {
  const opcoId = shape.opcoId;
  /** The main opco entry, polling once a minute (of the test's clock). */
  const entry = { adapter: shape.adapter, rateLimit: shape.rateLimit, pollingIntervalMs: INTERVAL_MS };

  t.test('a poller turns sandbox state changes into the three change events', async (t) => {
    const clock = new TestClock({ frozen: true });
    const service = await startService({
      clock,
      opcoId,
      sandbox: { shape: shape.sandbox, dossierCount: 120, factureCount: 40 },
      opco: entry,
    });
    const receiver = await startReceiver();
    t.teardown(async () => {
      await service.close();
      await receiver.close();
    });
    const { sandbox } = service;
    const hook = (
      await service.request('POST', '/webhooks', {
        body: {
          callbackUrl: `${receiver.url}/changes`,
          events: ['dossier.etat_changed', 'dossier.updated', 'facture.etat_changed'],
        },
      })
    ).body;
    const accepted = await service.request('POST', '/sync/dossiers', { body: { opcoId, enablePoller: true } });
    await watchSync(service, accepted.body.syncId);

    const pollers = await service.get('/pollers');
    t.equal(pollers.status, 200);
    t.equal(pollers.body.length, 1);
    t.match(pollers.body[0], { opcoId, status: 'active', intervalMs: INTERVAL_MS, lastError: null });
    t.same((await service.get('/pollers', { key: KEY_B })).body, [], 'other tenants have none');
    await nextPoll(service, clock);
    t.equal(receiver.received.length, 0, 'nothing changed yet: no event');

    const before = new Map(sandbox.dataset.dossiers.map((d: any) => [d.numeroInterne, d.etat]));
    const facturesBefore = new Map(sandbox.dataset.factures.map((f: any) => [f.numeroInterneFacture, f.etatFacture]));
    const moved = sandbox.advance({ dossiers: 3, factures: 2 });
    const expected = 3 + 3 + 2;
    await nextPoll(service, clock);
    await receiver.waitFor(expected, 15_000);
    // Time jumps by whole intervals: an attempt still in flight would see its lease lapse and the
    // delivery sent twice (at least once is the promise; Svc-Delivery-Id lets receivers tell).
    await deliveryLogs(
      service,
      hook.id,
      (logs) => logs.filter((l: { status: string }) => l.status === 'delivered').length === expected,
    );
    await nextPoll(service, clock);
    await nextPoll(service, clock);
    const byEvent = (type: string) => receiver.received.filter((r) => r.body.event === type).map((r) => r.body.data);
    t.ok(
      receiver.received.every((r) => signatureValid(hook.secret, r)),
      'signed',
    );

    const etat = byEvent('dossier.etat_changed');
    t.same(etat.map((d) => d.numeroInterne).sort(), [...moved.dossiers].sort());
    for (const change of etat) {
      const now = sandbox.dataset.dossiers.find((d: any) => d.numeroInterne === change.numeroInterne) as any;
      t.same(change, {
        numeroInterne: now.numeroInterne,
        numeroExterne: now.numeroExterne,
        numeroDeca: now.numeroDeca,
        previousEtat: before.get(now.numeroInterne),
        etat: now.etat,
      });
    }
    const updated = byEvent('dossier.updated');
    t.same(updated.map((d) => d.numeroInterne).sort(), [...moved.dossiers].sort());
    t.ok(
      updated.every((d) => d.dossier.numeroInterne === d.numeroInterne && d.dossier.cerfa),
      'the new content',
    );

    const factures = byEvent('facture.etat_changed');
    t.same(factures.map((f) => f.numeroInterneFacture).sort(), [...moved.factures].sort());
    for (const change of factures) {
      const now = sandbox.dataset.factures.find(
        (f: any) => f.numeroInterneFacture === change.numeroInterneFacture,
      ) as any;
      t.match(change, {
        referenceFactureCFA: now.referenceFactureCFA,
        previousEtat: facturesBefore.get(now.numeroInterneFacture),
        etat: now.etatFacture,
        montantFacture: now.montantFacture,
      });
      t.ok('referenceVirement' in change && 'dateReglement' in change);
      t.equal(change.dateReglement, now.dateReglement, 'payment date as YYYY-MM-DD or null');
    }
    t.equal(receiver.received.length, expected, 'no duplicate events over several polls');

    const stopped = await service.request('DELETE', `/pollers/${opcoId}`);
    t.same(stopped.body, { deleted: true });
    t.same((await service.get('/pollers')).body, []);
    t.equal((await service.request('DELETE', `/pollers/${opcoId}`)).status, 404);
    sandbox.advance({ dossiers: 2 });
    const polled = sandbox.received.length;
    await clock.advance(3 * INTERVAL_MS);
    await new Promise((r) => setTimeout(r, 100));
    t.equal(sandbox.received.length, polled, 'a stopped poller polls no more');
    t.equal(receiver.received.length, expected, 'and emits nothing');
    t.equal((await service.request('DELETE', `/pollers/${opcoId}`, { key: KEY_A })).status, 404);
  });

  t.test('a poller this worker starts polls after its own interval, not after the idle wait', async (t) => {
    const clock = new TestClock({ frozen: true });
    const shortMs = 5000;
    const service = await startService({
      clock,
      opcoId,
      sandbox: { shape: shape.sandbox, dossierCount: 20, factureCount: 5 },
      opco: { ...entry, pollingIntervalMs: shortMs },
    });
    t.teardown(() => service.close());
    const sync = service.kernel.config.sync as SyncConfig;
    const idleWaitMs = sync.sweepIntervalMs;
    t.ok(idleWaitMs > 2 * shortMs, `the idle wait (${idleWaitMs} ms) is well above the poller's interval`);
    // The worker looks for due polls, finds none, and then waits its longest (its look is over
    // when its timer is set again).
    const timers = clock.pending();
    await clock.advance(2 * sync.pollTickMs);
    await eventually(() => clock.pending() === timers, 'the first look for due polls over');
    const accepted = await service.request('POST', '/sync/dossiers', { body: { opcoId, enablePoller: true } });
    await watchSync(service, accepted.body.syncId);
    const started = (await service.get('/pollers')).body[0];
    t.match(started, { intervalMs: shortMs });
    await clock.advance(shortMs);
    await eventually(async () => {
      const poller = (await service.get('/pollers')).body[0];
      return poller && poller.lastPollAt !== started.lastPollAt;
    }, 'a poll one short interval after the sync');
    t.pass(`polled ${shortMs} ms after the sync, not ${idleWaitMs} ms after the last look`);
  });

  t.test('two workers sharing one store never run the same poll twice', async (t) => {
    const { createEmbeddedStore } = await import('@opco-proxy/core');
    const upstream = await startSandbox({ shape: shape.sandbox, dossierCount: 60, factureCount: 10 });
    const store = await createEmbeddedStore({});
    const seen: DomainEvent[] = [];
    const clock = new TestClock({ frozen: true });
    const options = { upstream, store, clock, opcoId, opco: entry, events: seen };
    const one = await startService(options);
    const two = await startService(options);
    t.teardown(async () => {
      await one.close();
      await two.close();
      await store.close();
      await upstream.close();
    });
    const announced = () =>
      seen.filter((e) => e.type === 'dossier.etat_changed').map((e) => String(e.data.numeroInterne));
    const accepted = await one.request('POST', '/sync/dossiers', { body: { opcoId, enablePoller: true } });
    await watchSync(one, accepted.body.syncId);
    upstream.resetStats();
    const moved = upstream.advance({ dossiers: 4 });
    const polls = () =>
      upstream.received.filter(
        (r) =>
          r.path === shape.paths.etats &&
          r.query[shape.query.dateModification] &&
          r.query[shape.query.page] === shape.page(1),
      ).length;
    for (let interval = 1; interval <= 4; interval++) {
      await nextPoll(one, clock);
      // Both workers tick on every advance; the poll's lease lets exactly one of them run it.
      await new Promise((r) => setTimeout(r, 100));
      t.equal(polls(), interval, `one poll in interval ${interval}, by one of the two workers`);
    }
    t.same(announced().sort(), [...moved.dossiers].sort(), 'each change announced once');
  });

  t.test('a poller keeps running across a restart of the process', async (t) => {
    const upstream = await startSandbox({ shape: shape.sandbox, dossierCount: 60, factureCount: 10 });
    const receiver = await startReceiver();
    t.teardown(async () => {
      await receiver.close();
      await upstream.close();
    });
    const clock = new TestClock({ frozen: true });
    const options = {
      upstream,
      clock,
      opcoId,
      opco: entry,
      config: { store: { type: 'embedded' as const, path: mkdtempSync(join(tmpdir(), 'opco-poller-')) } },
    };
    const first = await startService(options);
    await first.request('POST', '/webhooks', {
      body: { callbackUrl: `${receiver.url}/after-restart`, events: ['dossier.etat_changed'] },
    });
    const accepted = await first.request('POST', '/sync/dossiers', { body: { opcoId, enablePoller: true } });
    await watchSync(first, accepted.body.syncId);
    await first.close();

    const second = await startService(options);
    t.teardown(() => second.close());
    t.equal((await second.get('/pollers')).body.length, 1, 'the poller is still there');
    const moved = upstream.advance({ dossiers: 2 });
    await nextPoll(second, clock);
    await receiver.waitFor(2, 15_000);
    t.same(
      receiver.received.map((r) => r.body.data.numeroInterne).sort(),
      [...moved.dossiers].sort(),
      'the restarted process polls and announces the changes',
    );
  });
}
