/**
 * An upstream call's deadline, as undici takes a `signal`: an EventEmitter that emits `abort`
 * (undici's documented alternative to an AbortSignal). `AbortSignal.timeout` cost about 11 µs
 * of CPU per call, tracked by a finalization registry, and its timer stayed armed for the whole
 * timeout after the call had ended: thousands of them at a few thousand reads a second
 * (bench/RESULTS.md, issue 40). This one costs a fraction of a microsecond and is disarmed once
 * the answer is read.
 *
 * A real timer, as AbortSignal.timeout's: the call's socket, not the timer, keeps the process alive.
 */
import { EventEmitter } from 'node:events';

export class CallDeadline extends EventEmitter {
  aborted = false;
  reason: Error | undefined;
  private readonly timer: NodeJS.Timeout;

  constructor(timeoutMs: number) {
    super();
    this.timer = setTimeout(() => this.expire(timeoutMs), timeoutMs).unref();
  }

  /** The call ended (answered, or failed otherwise): nothing will abort it any more. */
  disarm(): void {
    clearTimeout(this.timer);
  }

  private expire(timeoutMs: number): void {
    // Named as AbortSignal.timeout's reason is: the client maps it to TIMEOUT, not NETWORK_ERROR.
    this.reason = Object.assign(new Error(`no answer within ${timeoutMs} ms`), { name: 'TimeoutError' });
    this.aborted = true;
    this.emit('abort');
  }
}
