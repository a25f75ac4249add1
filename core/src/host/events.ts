/** Domain events (SPEC 6.1, D22) as emitted through the `event` hook; the types are the schema's. */
import type { EventType } from '@opco-proxy/schemas';

export type { EventType };

export interface DomainEvent {
  /** Unique per event; becomes `Svc-Delivery-Id` (D23). */
  id: string;
  type: EventType;
  tenant: string;
  opcoId: string;
  timestamp: string;
  data: Record<string, unknown>;
}
