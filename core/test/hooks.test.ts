// The hook registry (hooks.ts): a fixed list of names, misuse refused with a stable code, and
// each family's way of running its handlers.
import t from 'tap';
import {
  Hooks,
  HOOK_NAMES,
  isKernelError,
  type CallContext,
  type CachedAnswer,
  type DomainEvent,
} from '../src/application.js';

const ctx = {} as CallContext; // the handlers below never read it
const answer = (json: string) => ({ json }) as CachedAnswer;

t.test('an unknown hook name is refused, naming the known ones', async (t) => {
  const hooks = new Hooks();
  t.throws(() => hooks.add('onRequest' as never, (() => undefined) as never), {
    code: 'OPCO_ERR_HOOK_UNKNOWN',
    message: `hook "onRequest" is not supported; known hooks: ${HOOK_NAMES.join(', ')}`,
  });
  t.throws(() => hooks.add('ready', 'not a function' as never), { code: 'OPCO_ERR_HOOK_NOT_FUNCTION' });
  t.equal(hooks.count('ready'), 0, 'nothing was added');
});

t.test('hooks are fixed once the kernel is ready', async (t) => {
  const hooks = new Hooks();
  hooks.add('ready', () => undefined);
  hooks.freeze();
  let thrown: unknown;
  try {
    hooks.add('event', () => undefined);
  } catch (err) {
    thrown = err;
  }
  t.ok(isKernelError(thrown, 'OPCO_ERR_HOOKS_FROZEN'), 'coded');
  t.match((thrown as Error).message, /hook "event" added after the kernel was ready/);
  t.equal(hooks.count('event'), 0);
  t.equal(hooks.count('ready'), 1);
});

t.test('lookup and peek: the first handler that answers ends the run', async (t) => {
  const hooks = new Hooks();
  const asked: string[] = [];
  hooks.add('lookup', () => void asked.push('a'));
  hooks.add('lookup', async () => (asked.push('b'), answer('"b"')));
  hooks.add('lookup', () => (asked.push('c'), answer('"c"')));
  t.same(await hooks.runLookup(ctx), answer('"b"'));
  t.same(asked, ['a', 'b'], 'c never asked');
  t.equal(hooks.runPeek(ctx), undefined, 'no peek handler, no answer');
  hooks.add('peek', () => answer('"p"'));
  t.same(hooks.runPeek(ctx), answer('"p"'));
});

t.test('pipeline hooks run in order and a throw stops the call', async (t) => {
  const hooks = new Hooks();
  const ran: number[] = [];
  hooks.add('beforeCall', () => void ran.push(1));
  hooks.add('beforeCall', () => {
    ran.push(2);
    throw new Error('refused');
  });
  hooks.add('beforeCall', () => void ran.push(3));
  await t.rejects(hooks.runPipeline('beforeCall', ctx), /refused/);
  t.same(ran, [1, 2]);
});

t.test('event handlers all run even when one fails; close runs in reverse order', async (t) => {
  const hooks = new Hooks();
  const failures: unknown[] = [];
  const seen: string[] = [];
  hooks.add('event', () => {
    throw new Error('first fails');
  });
  hooks.add('event', (event: DomainEvent) => void seen.push(event.id));
  await hooks.runEvent({ id: 'e1' } as DomainEvent, (err) => failures.push(err));
  t.same(seen, ['e1']);
  t.equal(failures.length, 1);

  const order: string[] = [];
  for (const name of ['a', 'b', 'c']) {
    hooks.add('ready', () => void order.push(`ready ${name}`));
    hooks.add('close', () => void order.push(`close ${name}`));
  }
  await hooks.runLifecycle('ready');
  await hooks.runLifecycle('close');
  t.same(order, ['ready a', 'ready b', 'ready c', 'close c', 'close b', 'close a']);
});
