/**
 * The typed hook registry: the only way plugins touch the request pipeline.
 * Modelled on Fastify's lib/hooks.js: a fixed list of names, one array of handlers per
 * name, one runner per family, and an error for a hook name that does not exist.
 * The pipeline hooks follow SPEC 1.1: lookup (3), beforeCall (5), afterCall (7-9), store (10).
 * Step 4 is not a hook but a seam with one provider (seams.ts: admission), since exactly one
 * thing may decide whether a call goes out.
 */
import type { CallContext, CachedAnswer } from '../pipeline/call-context.js';
import type { DomainEvent } from './events.js';
import { kernelError } from '../errors/kernel-errors.js';

export interface HookHandlers {
  /** Step 3: may answer the call without an upstream request (first answer wins). */
  lookup: (ctx: CallContext) => Promise<CachedAnswer | undefined> | CachedAnswer | undefined;
  /**
   * Step 3 without waiting: an answer this process holds at hand (a cache's memory), or nothing.
   * Synchronous, so a read it answers waits on nothing (a read's shortcut, read-routes.ts, tried
   * before its handler); a read it does not answer goes the whole way, through `lookup`.
   */
  peek: (ctx: CallContext) => CachedAnswer | undefined;
  /** Step 5: last changes to the outgoing request, after the profile's transforms. */
  beforeCall: (ctx: CallContext) => Promise<void> | void;
  /** Steps 7-9: sees the transformed, validated answer or the error of the call. */
  afterCall: (ctx: CallContext) => Promise<void> | void;
  /** Step 10: keeps a successful GET answer. */
  store: (ctx: CallContext) => Promise<void> | void;
  /** A domain event was emitted (job.completed, sync.batch, ...). */
  event: (event: DomainEvent) => Promise<void> | void;
  ready: () => Promise<void> | void;
  /** The kernel is stopping: finish or hand back work in progress by `deadline` (clock time, P3). */
  close: (stopping: { deadline: number }) => Promise<void> | void;
}

export type HookName = keyof HookHandlers;

export const HOOK_NAMES: readonly HookName[] = [
  'lookup',
  'peek',
  'beforeCall',
  'afterCall',
  'store',
  'event',
  'ready',
  'close',
];

export class Hooks {
  private readonly handlers: { [K in HookName]: HookHandlers[K][] } = {
    lookup: [],
    peek: [],
    beforeCall: [],
    afterCall: [],
    store: [],
    event: [],
    ready: [],
    close: [],
  };

  private frozen = false;

  add<K extends HookName>(name: K, handler: HookHandlers[K]): void {
    if (this.frozen) throw kernelError('OPCO_ERR_HOOKS_FROZEN', { hook: String(name) });
    if (!HOOK_NAMES.includes(name))
      throw kernelError('OPCO_ERR_HOOK_UNKNOWN', { hook: String(name), known: HOOK_NAMES.join(', ') });
    if (typeof handler !== 'function') throw kernelError('OPCO_ERR_HOOK_NOT_FUNCTION', { hook: name });
    this.handlers[name].push(handler);
  }

  /** Called once the kernel is ready: from then on, add() throws. */
  freeze(): void {
    this.frozen = true;
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

  /** The same, synchronous: the first handler that answers ends the run. */
  runPeek(ctx: CallContext): CachedAnswer | undefined {
    for (const handler of this.handlers.peek) {
      const answer = handler(ctx);
      if (answer !== undefined) return answer;
    }
    return undefined;
  }

  /** Pipeline family: every handler in registration order; a throw stops the call. */
  async runPipeline(name: 'beforeCall' | 'afterCall' | 'store', ctx: CallContext): Promise<void> {
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
  async runLifecycle(
    name: 'ready' | 'close',
    onError?: (err: unknown) => void,
    stopping = { deadline: Number.POSITIVE_INFINITY },
  ): Promise<void> {
    const list = name === 'close' ? [...this.handlers.close].reverse() : this.handlers.ready;
    for (const handler of list) {
      try {
        await handler(stopping);
      } catch (err) {
        if (!onError) throw err;
        onError(err);
      }
    }
  }
}
