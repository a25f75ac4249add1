/**
 * An instance's view of its hub, for Prometheus: the connection state (one gauge per state, 1 for
 * the current one) and how long calls waited for admission, by opco and by mode (`hub` for a
 * grant, `local` for the fallback bucket). Registered on the registry the caller passes.
 */
import { Gauge, Histogram, Registry } from 'prom-client';
import type { ConnectionState } from './hub-connection.js';

const STATES: ConnectionState[] = ['connecting', 'connected', 'disconnected', 'closed'];

export interface InstanceMetrics {
  state(state: ConnectionState): void;
  waited(opcoId: string, mode: 'hub' | 'local', ms: number): void;
}

export function createInstanceMetrics(registry: Registry = new Registry()): InstanceMetrics {
  const connection = new Gauge({
    name: 'opco_proxy_hub_connection_state',
    help: 'Connection to the hub: 1 for the current state',
    labelNames: ['state'] as const,
    registers: [registry],
  });
  const wait = new Histogram({
    name: 'opco_proxy_hub_grant_wait_seconds',
    help: 'Time an upstream call waited for admission (hub grant or local bucket)',
    labelNames: ['opco', 'mode'] as const,
    buckets: [0.001, 0.01, 0.1, 0.5, 1, 2.5, 5, 10, 30, 60, 120],
    registers: [registry],
  });
  return {
    state(current) {
      for (const state of STATES) connection.set({ state }, state === current ? 1 : 0);
    },
    waited(opcoId, mode, ms) {
      wait.observe({ opco: opcoId, mode }, ms / 1000);
    },
  };
}
