/** Domain events (SPEC 6.1, D22) as emitted through the `event` hook. */
export const EVENT_TYPES = [
  'dossier.etat_changed', 'dossier.updated', 'facture.etat_changed',
  'job.completed', 'job.failed', 'job.progress',
  'sync.started', 'sync.batch', 'sync.completed', 'sync.failed', 'sync.cancelled',
] as const;
export type EventType = (typeof EVENT_TYPES)[number];

export interface DomainEvent {
  /** Unique per event; becomes `Svc-Delivery-Id` (D23). */
  id: string;
  type: EventType;
  tenant: string;
  opcoId: string;
  timestamp: string;
  data: Record<string, unknown>;
}
