/**
 * Types of each operation's input and output, read from the route manifest and the types
 * generated from the JSON Schemas: a handler mounted for `createWebhook` receives a
 * `WebhookCreateBody` and must answer 201 with a `Webhook`, and the compiler checks both.
 */
import type { SchemaTypes } from './generated/types.js';
import type { OperationId, Operations } from './route-manifest.js';

type TypeOf<S> = S extends keyof SchemaTypes ? SchemaTypes[S] : unknown;

/** The validated body of an operation (undefined when it takes none). */
export type BodyOf<Op extends OperationId> = Operations[Op] extends { body: infer B } ? TypeOf<B> : undefined;

/** The validated query of an operation, every value a string as it arrived. */
export type QueryOf<Op extends OperationId> = Operations[Op] extends { query: infer Q }
  ? TypeOf<Q>
  : Record<string, never>;

type Responses<Op extends OperationId> = Operations[Op]['responses'];

/** What a handler answers: one of the operation's documented statuses with its body type. */
export type ReplyOf<Op extends OperationId> = {
  [S in keyof Responses<Op> & number]: {
    status: S;
    body: Responses<Op>[S] extends { schema: infer B } ? TypeOf<B> : unknown;
    headers?: Record<string, string>;
    /**
     * What only the handler knows of what it acted on, for the audit record (D32): the tenant
     * an operator acted for, ids beyond the path's and the answer's.
     */
    audit?: AuditNote;
  };
}[keyof Responses<Op> & number];

export interface AuditNote {
  tenant?: string;
  /** The opcoId of what the action was on, when neither the path nor the body names it. */
  opcoId?: string;
  targets?: { jobId?: string; webhookId?: string; deliveryId?: string; syncId?: string };
  /**
   * An action on many things at once (a bulk retry): one record for each, with its tenant and
   * targets, instead of the request's one record. Empty: the request's one record.
   */
  each?: ReadonlyArray<{ tenant: string; opcoId?: string; targets: { jobId?: string } }>;
}
