// Periodic tasks on a frozen clock: every `intervalMs` by default, as long as the task asks when
// it knows when it next has work (NextRun), at once when woken, and again right after a run that
// a wake interrupted (that run may have looked for work before the work arrived).
import t, { type Test } from 'tap';
import { PeriodicTask, TestClock } from '../src/application.js';

/** A task whose runs are recorded (clock time) and whose answer the test sets. */
function recorded(clock: TestClock) {
  const runs: number[] = [];
  const state: { answer: unknown; hold?: Promise<void> } = { answer: undefined };
  const start = clock.now();
  const task = async () => {
    runs.push(clock.now() - start);
    await state.hold;
    return state.answer;
  };
  return { runs, state, task };
}

/** A task every 1 s on a frozen clock, started, stopped when the test ends. */
function started(t: Test) {
  const clock = new TestClock({ frozen: true });
  const { runs, state, task } = recorded(clock);
  const periodic = new PeriodicTask('t', 1000, task, clock, (err) => t.error(err));
  periodic.start();
  t.teardown(() => periodic.stop());
  return { clock, runs, state, periodic };
}

/** Moves the clock in 1 s steps, letting each run end before the next step. */
async function advance(clock: TestClock, ms: number): Promise<void> {
  for (let moved = 0; moved < ms; moved += 1000) {
    await clock.advance(1000);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

t.test('without an answer, the task runs every intervalMs', async (t) => {
  const { clock, runs } = started(t);
  await advance(clock, 3000);
  t.same(runs, [1000, 2000, 3000]);
});

t.test(
  'a task that answers {nextRunInMs} next runs that much later, and by intervalMs again when it stops asking',
  async (t) => {
    const { clock, runs, state } = started(t);
    state.answer = { nextRunInMs: 5000 };
    await advance(clock, 10_000);
    t.same(runs, [1000, 6000], 'a run every 5 s, none at the 1 s interval');
    t.equal(clock.pending(), 1, 'one timer waits: the next run');
    state.answer = 42;
    await advance(clock, 3000);
    t.same(runs, [1000, 6000, 11_000, 12_000, 13_000], 'an answer that is not a NextRun leaves intervalMs');
  },
);

t.test('wake() runs the task at once, and once more right after a run it interrupted', async (t) => {
  const { clock, runs, state, periodic } = started(t);
  state.answer = { nextRunInMs: 60_000 };
  await advance(clock, 1000);
  t.same(runs, [1000]);
  await advance(clock, 2000);
  periodic.wake();
  await new Promise((resolve) => setImmediate(resolve));
  t.same(runs, [1000, 3000], 'woken at 3 s, 57 s before its answer asked');

  let release!: () => void;
  state.hold = new Promise((resolve) => (release = resolve));
  periodic.wake();
  await new Promise((resolve) => setImmediate(resolve));
  t.same(runs, [1000, 3000, 3000], 'a second wake: a run starts and holds');
  periodic.wake();
  periodic.wake();
  state.hold = undefined;
  release();
  await new Promise((resolve) => setImmediate(resolve));
  await clock.advance(0);
  await new Promise((resolve) => setImmediate(resolve));
  t.same(runs, [1000, 3000, 3000, 3000], 'wakes during a run make one more run right after it');
  await advance(clock, 59_000);
  t.same(runs, [1000, 3000, 3000, 3000], 'then the answer holds again: nothing before 60 s');
  await advance(clock, 1000);
  t.same(runs, [1000, 3000, 3000, 3000, 63_000]);
});

t.test('a stopped task is not woken', async (t) => {
  const clock = new TestClock({ frozen: true });
  const { runs, task } = recorded(clock);
  const periodic = new PeriodicTask('t', 1000, task, clock, (err) => t.error(err));
  periodic.start();
  await periodic.stop();
  periodic.wake();
  await advance(clock, 2000);
  t.same(runs, []);
  t.equal(clock.pending(), 0);
});
