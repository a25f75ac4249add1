/**
 * The attack suite of issue 27, run on one backend with and without the hub: the legitimate
 * CFA keeps at least 95 % of its answers whatever the stranger does; a refused key reaches the
 * upstream once per memory period; the hub's effective limit holds through a flood of refusals.
 */
import type { Test } from 'tap';
import { startHubProcess, type HubProcess } from './hub-process.js';
import {
  describeOutcome,
  EDGE_RATE_LIMIT,
  startEdgeScene,
  type Attack,
  type EdgeScene,
  type SceneOptions,
} from './edge-attack.js';

/** More than one window of the OPCO's limit (10 s): every attack spans a full window. */
const ATTACK_MS = 12_000;
/** The unproven slice while no stranger is known (tenantKeys.calmUnprovenShare's default, 0.5). */
const CALM_SLICE = EDGE_RATE_LIMIT.limit / 2;

async function effectiveLimit(hub: HubProcess): Promise<number | undefined> {
  const limits = await hub.admin('GET', '/admin/limits');
  return (limits.body.limits as Array<{ opcoId: string; effectiveLimit: number }>).find(
    (item) => item.opcoId === 'sandbox',
  )?.effectiveLimit;
}

/**
 * `calmOnset`: the store budget's slice is the calm one until the service learns of a stranger
 * (P13), so the calls in flight before the stranger's first 403 are outside the narrow slice's
 * bound (they take its slots first); behind the hub the slice is the hub's from the start.
 */
async function replay(t: Test, scene: EdgeScene, attacks: Attack[], slice = 3, calmOnset = false): Promise<void> {
  t.equal(await scene.warmUp(), 200, 'the CFA has used the service before: its key is proven');
  for (const attack of attacks) {
    const outcome = await scene.attack(attack, ATTACK_MS);
    t.comment(describeOutcome(outcome));
    t.ok(
      outcome.cfa.answered >= Math.ceil(outcome.cfa.sent * 0.95),
      `${attack}: the CFA got ${outcome.cfa.answered} of ${outcome.cfa.sent} answers (at least 95 %)`,
    );
    t.ok(
      outcome.mostCallsOfOneKey <= 1,
      `${attack}: a refused key reached the upstream at most once (${outcome.mostCallsOfOneKey})`,
    );
    if (attack !== 'none') {
      const counted = outcome.strangerUpstreamCalls - (calmOnset ? outcome.strangerOnsetCalls : 0);
      if (calmOnset) {
        t.ok(
          outcome.strangerOnsetCalls <= CALM_SLICE,
          `${attack}: before its first 403, the stranger took at most the calm slice (${outcome.strangerOnsetCalls} calls)`,
        );
      }
      t.ok(
        counted <= slice * Math.ceil(ATTACK_MS / EDGE_RATE_LIMIT.windowMs),
        `${attack}: the stranger's keys took at most the unproven slice (${counted} calls` +
          (calmOnset ? `, and ${outcome.strangerOnsetCalls} before its first 403)` : ')'),
      );
      t.ok((outcome.stranger.statuses['429'] ?? 0) > 0, `${attack}: most of the stranger's requests were refused 429`);
      t.notOk(outcome.stranger.statuses['0'], `${attack}: every stranger request got an answer`);
    }
  }
}

export function edgeAttackSuite(t: Test, label: string, backends: () => SceneOptions['backends']): void {
  t.test(`${label}: the store budget`, async (t) => {
    const scene = await startEdgeScene({ backends: backends() });
    t.teardown(() => scene.close());
    await replay(t, scene, ['none', 'random keys', '50 invalid keys reused'], 3, true);
    const metrics = await scene.metrics();
    t.match(
      metrics,
      /opco_proxy_budget_calls_total\{opco="sandbox",tenant="unproven"\} \d+/,
      'budget calls by unproven tenants counted',
    );
    t.match(metrics, /opco_proxy_address_refusals_total\{reason="unproven"\} [1-9]/, 'per-address refusals counted');
    t.match(metrics, /opco_proxy_refused_key_hits_total\{opco="sandbox"\} \d+/);
  });

  t.test(`${label}: behind the hub`, async (t) => {
    const hub = await startHubProcess({ opcos: { sandbox: EDGE_RATE_LIMIT } });
    t.teardown(() => hub.stop());
    const scene = await startEdgeScene({ backends: backends(), hub });
    t.teardown(() => scene.close());
    await replay(t, scene, ['random keys', '50 invalid keys reused']);
    t.equal(await effectiveLimit(hub), EDGE_RATE_LIMIT.limit, 'the hub kept its configured limit');
  });

  // A slice wide enough (9 calls a window) and an address limit loose enough that a third of the
  // upstream's answers are refusals: before issue 27 the hub read them as errors and halved its
  // limit, down to its floor, and the CFA's reads waited and failed.
  t.test(`${label}: behind the hub, a flood of refusals reaching the upstream`, async (t) => {
    const hub = await startHubProcess({ opcos: { sandbox: EDGE_RATE_LIMIT }, extra: { unprovenShare: 0.3 } });
    t.teardown(() => hub.stop());
    const config = { tenantKeys: { unprovenShare: 0.3 }, addressRateLimit: { perSecond: 20, burst: 40 } };
    const scene = await startEdgeScene({ backends: backends(), hub, config });
    t.teardown(() => scene.close());
    await replay(t, scene, ['random keys'], 9);
    t.equal(
      await effectiveLimit(hub),
      EDGE_RATE_LIMIT.limit,
      'refusals are not upstream failures: the hub kept its configured limit',
    );
  });
}
