/**
 * Per-destination (URL origin) state of the delivery worker: a keep-alive agent of its own, whose
 * every new connection goes through the SSRF-guarded lookup (D24: the address connected to is the
 * address just checked; a reused connection is one to an address checked when it was opened), and
 * a lane bounding how many attempts run at once to that origin, so one slow receiver holds its
 * own lane and not the worker's queue slots. Deliveries over a lane's bound wait here, by id only:
 * their queue message is acknowledged, and the record, due and unclaimed, is what a crash leaves
 * for the overdue sweep to queue again (D25).
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';

export interface DestinationAgents {
  http: HttpAgent;
  https: HttpsAgent;
}

interface Lane {
  inFlight: number;
  waiting: string[];
  agents: DestinationAgents;
}

/** Idle keep-alive connections are closed after this long. */
const IDLE_SOCKET_MS = 30_000;
/** Destinations remembered at most; an idle one beyond this loses its agent (its sockets closed). */
const MAX_DESTINATIONS = 1000;

export class Destinations {
  private readonly lanes = new Map<string, Lane>();

  constructor(readonly perDestination: number) {}

  agents(origin: string): DestinationAgents {
    return this.lane(origin).agents;
  }

  /** True when an attempt may start now to `origin` (and it is counted); false when its lane is full. */
  tryEnter(origin: string): boolean {
    const lane = this.lane(origin);
    if (lane.inFlight >= this.perDestination) return false;
    lane.inFlight += 1;
    return true;
  }

  /** An attempt counted regardless of the bound (one whose origin was learnt only after it was claimed). */
  enter(origin: string): void {
    this.lane(origin).inFlight += 1;
  }

  /** Keeps a delivery id to start when the lane frees; an id already waiting is kept once. */
  wait(origin: string, deliveryId: string): void {
    const lane = this.lane(origin);
    if (!lane.waiting.includes(deliveryId)) lane.waiting.push(deliveryId);
  }

  /** Ends an attempt; returns the next waiting delivery id, counted as entered, if there is one and room. */
  leave(origin: string, pull = true): string | undefined {
    const lane = this.lanes.get(origin);
    if (!lane) return undefined;
    lane.inFlight -= 1;
    if (pull && lane.inFlight < this.perDestination && lane.waiting.length > 0) {
      lane.inFlight += 1;
      return lane.waiting.shift();
    }
    return undefined;
  }

  close(): void {
    for (const lane of this.lanes.values()) {
      lane.agents.http.destroy();
      lane.agents.https.destroy();
    }
    this.lanes.clear();
  }

  private lane(origin: string): Lane {
    let lane = this.lanes.get(origin);
    if (lane) {
      // Most recently used last, so the first idle one is the one to forget.
      this.lanes.delete(origin);
      this.lanes.set(origin, lane);
      return lane;
    }
    const options = { keepAlive: true, maxSockets: this.perDestination, timeout: IDLE_SOCKET_MS };
    lane = { inFlight: 0, waiting: [], agents: { http: new HttpAgent(options), https: new HttpsAgent(options) } };
    this.lanes.set(origin, lane);
    if (this.lanes.size > MAX_DESTINATIONS) this.forgetIdle();
    return lane;
  }

  private forgetIdle(): void {
    for (const [origin, lane] of this.lanes) {
      if (lane.inFlight > 0 || lane.waiting.length > 0) continue;
      lane.agents.http.destroy();
      lane.agents.https.destroy();
      this.lanes.delete(origin);
      return;
    }
  }
}

/** The lane key: scheme, host and port of a callback URL (null when it does not parse). */
export function originOf(callbackUrl: string): string | null {
  try {
    return new URL(callbackUrl).origin;
  } catch {
    return null;
  }
}
