/**
 * The typed hook registry: the only way plugins touch the request pipeline.
 * Modelled on Fastify's lib/hooks.js: a fixed list of names, one array of handlers per
 * name, one runner per family, and an error for a hook name that does not exist.
 * The pipeline hooks follow SPEC 1.1: lookup (3), admit (4), beforeCall (5),
 * afterCall (7-9), store (10).
 */
import type { CallContext, CachedAnswer } from './call-context.js';
import type { DomainEvent } from './events.js';

export interface HookHandlers {
  /** Step 3: may answer the call without an upstream request (first answer wins). */
  lookup: (ctx: CallContext) => Promise<CachedAnswer | undefined> | CachedAnswer | undefined;
  /** Step 4: waits for or refuses upstream budget; throws a ServiceError to refuse. */
  admit: (ctx: CallContext) => Promise<void> | void;
  /** Step 5: last changes to the outgoing request, after the profile's transforms. */
  beforeCall: (ctx: CallContext) => Promise<void> | void;
  /** Steps 7-9: sees the transformed, validated answer or the error of the call. */
  afterCall: (ctx: CallContext) => Promise<void> | void;
  /** Step 10: keeps a successful GET answer. */
  store: (ctx: CallContext) => Promise<void> | void;
  /** A domain event was emitted (job.completed, sync.batch, ...). */
  event: (event: DomainEvent) => Promise<void> | void;
  ready: () => Promise<void> | void;
  close: () => Promise<void> | void;
}

export type HookName = keyof HookHandlers;

export const HOOK_NAMES: readonly HookName[] = [
  'lookup', 'admit', 'beforeCall', 'afterCall', 'store', 'event', 'ready', 'close',
];

export class Hooks {
  private readonly handlers: { [K in HookName]: HookHandlers[K][] } = {
    lookup: [], admit: [], beforeCall: [], afterCall: [], store: [], event: [], ready: [], close: [],
  };

  add<K extends HookName>(name: K, handler: HookHandlers[K]): void {
    if (!HOOK_NAMES.includes(name)) throw new Error(`hook "${String(name)}" is not supported; known hooks: ${HOOK_NAMES.join(', ')}`);
    if (typeof handler !== 'function') throw new Error(`hook "${name}" handler must be a function`);
    this.handlers[name].push(handler);
  }

  count(name: HookName): number {
    return this.handlers[name].length;
  }

  /** Answer family: the first handler that answers ends the run. */
  async runLookup(ctx: CallContext): Promise<CachedAnswer | undefined> {
    for (const handler of this.handlers.lookup) {
      const answer = await handler(ctx);
      if (answer !== undefined) return answer;
    }
    return undefined;
  }

  /** Pipeline family: every handler in registration order; a throw stops the call. */
  async runPipeline(name: 'admit' | 'beforeCall' | 'afterCall' | 'store', ctx: CallContext): Promise<void> {
    for (const handler of this.handlers[name]) await handler(ctx);
  }

  /** Event family: every handler runs even if one fails; failures go to `onError`. */
  async runEvent(event: DomainEvent, onError: (err: unknown) => void): Promise<void> {
    for (const handler of this.handlers.event) {
      try {
        await handler(event);
      } catch (err) {
        onError(err);
      }
    }
  }

  /** Lifecycle family: `ready` in registration order, `close` in reverse (last opened, first closed). */
  async runLifecycle(name: 'ready' | 'close', onError?: (err: unknown) => void): Promise<void> {
    const list = name === 'close' ? [...this.handlers.close].reverse() : this.handlers.ready;
    for (const handler of list) {
      try {
        await handler();
      } catch (err) {
        if (!onError) throw err;
        onError(err);
      }
    }
  }
}
