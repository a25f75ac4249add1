/**
 * The hub's Prometheus metrics, on its own registry (served at GET /metrics without auth):
 * grants and waits per budget, how long asks waited, each budget's effective limit, the
 * instances connected per fleetId, whether this hub leads (failover), and the requests refused by the per-address limits. Labels
 * carry fleets and opcoIds, never keys or addresses.
 */
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { AddressRefusal } from '@opco-proxy/core/limits';
import type { GrantScheduler, IssuedGrant, SchedulerObserver } from './grant-scheduler.js';

export interface HubMetrics {
  registry: Registry;
  /** Feeds the grant and wait figures; give it to the scheduler. */
  observer: SchedulerObserver;
  /** The gauges read the scheduler when scraped; undefined while the hub stands by (failover). */
  watch(scheduler: GrantScheduler | undefined): void;
  /** A request refused 429 by the per-address limits (core's AddressLimits). */
  addressRefused: (reason: AddressRefusal) => void;
}

export function createHubMetrics(): HubMetrics {
  const registry = new Registry();
  const labelNames = ['fleet_id', 'opco'] as const;
  const grants = new Counter({
    name: 'opco_proxy_hub_grants_total',
    help: 'Grants issued, per fleet and opco',
    labelNames,
    registers: [registry],
  });
  const waits = new Counter({
    name: 'opco_proxy_hub_waits_total',
    help: 'Asks that found no free slot and waited',
    labelNames,
    registers: [registry],
  });
  const waitSeconds = new Histogram({
    name: 'opco_proxy_hub_wait_seconds',
    help: 'Time from an ask to its grant',
    labelNames,
    buckets: [0.001, 0.01, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  const addressRefusals = new Counter({
    name: 'opco_proxy_hub_address_refusals_total',
    help: 'Requests refused 429 by the per-address limits: failed-auth (after wrong admin or hub keys), backoff (wrong admin keys)',
    labelNames: ['reason'] as const,
    registers: [registry],
  });
  let scheduler: GrantScheduler | undefined;
  new Gauge({
    name: 'opco_proxy_hub_effective_limit',
    help: 'Effective limit of each budget (calls per window) after adaptation',
    labelNames,
    registers: [registry],
    collect() {
      this.reset();
      for (const view of scheduler?.limits() ?? [])
        this.set({ fleet_id: view.fleetId, opco: view.opcoId }, view.effectiveLimit);
    },
  });
  new Gauge({
    name: 'opco_proxy_hub_connected_instances',
    help: 'Instances connected, per fleet',
    labelNames: ['fleet_id'] as const,
    registers: [registry],
    collect() {
      this.reset();
      for (const [fleetId, count] of scheduler?.connectedInstances() ?? []) this.set({ fleet_id: fleetId }, count);
    },
  });
  new Gauge({
    name: 'opco_proxy_hub_leader',
    help: '1 while this hub leads and grants, 0 while it stands by (failover)',
    registers: [registry],
    collect() {
      this.set(scheduler ? 1 : 0);
    },
  });
  const observer: SchedulerObserver = {
    granted(grant: IssuedGrant) {
      const labels = { fleet_id: grant.fleetId, opco: grant.opcoId };
      grants.inc(labels);
      waitSeconds.observe(labels, grant.waitedMs / 1000);
    },
    queued(fleetId, opcoId) {
      waits.inc({ fleet_id: fleetId, opco: opcoId });
    },
  };
  return {
    registry,
    observer,
    watch: (s) => void (scheduler = s),
    addressRefused: (reason) => addressRefusals.inc({ reason }),
  };
}
