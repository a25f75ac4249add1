/**
 * Per-destination (URL origin) keep-alive agents of the delivery worker: every new connection goes
 * through the SSRF-guarded lookup (D24: the address connected to is the address just checked; a
 * reused connection is one to an address checked when it was opened). How many attempts run at
 * once, and to which origin, is the turns' business (`turns.ts`): an agent never makes an attempt
 * wait for a socket (its bound is the worker's slots).
 */
import { Agent as HttpAgent } from 'node:http';
import { Agent as HttpsAgent } from 'node:https';

export interface DestinationAgents {
  http: HttpAgent;
  https: HttpsAgent;
}

interface Destination {
  inUse: number;
  agents: DestinationAgents;
}

/** Idle keep-alive connections are closed after this long. */
const IDLE_SOCKET_MS = 30_000;
/** Destinations remembered at most; an idle one beyond this loses its agent (its sockets closed). */
const MAX_DESTINATIONS = 1000;

export class Destinations {
  private readonly destinations = new Map<string, Destination>();

  /** `maxSockets`: connections at once to one origin (the worker's slots). */
  constructor(private readonly maxSockets: number) {}

  /** The origin's agents, counted as in use until `release`. */
  use(origin: string): DestinationAgents {
    const destination = this.destination(origin);
    destination.inUse += 1;
    return destination.agents;
  }

  release(origin: string): void {
    const destination = this.destinations.get(origin);
    if (destination) destination.inUse -= 1;
  }

  close(): void {
    for (const { agents } of this.destinations.values()) {
      agents.http.destroy();
      agents.https.destroy();
    }
    this.destinations.clear();
  }

  private destination(origin: string): Destination {
    let destination = this.destinations.get(origin);
    if (destination) {
      // Most recently used last, so the first idle one is the one to forget.
      this.destinations.delete(origin);
      this.destinations.set(origin, destination);
      return destination;
    }
    const options = { keepAlive: true, maxSockets: this.maxSockets, timeout: IDLE_SOCKET_MS };
    destination = { inUse: 0, agents: { http: new HttpAgent(options), https: new HttpsAgent(options) } };
    // Before the new one is in: forgetting it would hand out agents that release and close never find.
    if (this.destinations.size >= MAX_DESTINATIONS) this.forgetIdle();
    this.destinations.set(origin, destination);
    return destination;
  }

  private forgetIdle(): void {
    for (const [origin, destination] of this.destinations) {
      if (destination.inUse > 0) continue;
      destination.agents.http.destroy();
      destination.agents.https.destroy();
      this.destinations.delete(origin);
      return;
    }
  }
}

/** The key of a destination: scheme, host and port of a callback URL (null when it does not parse). */
export function originOf(callbackUrl: string): string | null {
  try {
    return new URL(callbackUrl).origin;
  } catch {
    return null;
  }
}
