// The one rolling window every budget counts with (D12): a slot counts from admission until
// windowMs after its call ended, unproven calls counted apart, a reported call counted once.
import t from 'tap';
import { freeBefore, leavesWindowAt, RollingWindow } from '../src/limits/rolling-window.js';

t.test('a held slot counts until windowMs after its call ends, then no more', async (t) => {
  const window = new RollingWindow(1000);
  window.hold();
  t.equal(window.occupied(0), 1, 'held');
  t.equal(window.occupied(50_000), 1, 'held however long the call lasts');
  window.end(50_000);
  t.equal(window.occupied(50_999), 1, 'ended, still inside the window');
  t.equal(window.nextLeaveAt(), 51_000);
  t.equal(window.occupied(51_000), 0, 'gone at end + windowMs');
  t.equal(window.nextLeaveAt(), undefined);
});

t.test('a slot given back unused stops counting at once', async (t) => {
  const window = new RollingWindow(1000);
  window.hold(true);
  t.equal(window.unprovenOccupied(0), 1);
  window.drop(true);
  t.equal(window.occupied(0), 0);
  t.equal(window.unprovenOccupied(0), 0);
});

t.test('unproven calls count in both totals and leave the window as the others do', async (t) => {
  const window = new RollingWindow(100);
  window.hold(true);
  window.hold(false);
  window.end(10, true);
  t.equal(window.occupied(20), 2);
  t.equal(window.unprovenOccupied(20), 1);
  t.equal(window.unprovenOccupied(110), 0, 'the unproven call left at 110');
  t.equal(window.occupied(110), 1, 'the proven one is still held');
});

t.test('calls reported out of order are kept oldest first; a call reported twice counts once', async (t) => {
  const window = new RollingWindow(100);
  window.addEnded(50, false, 'b');
  window.addEnded(20, false, 'a');
  window.addEnded(50, false, 'b');
  t.equal(window.occupied(60), 2, 'b counted once');
  t.ok(window.hasEnded('a'));
  t.equal(window.nextLeaveAt(), 120, 'the oldest end leaves first');
  t.equal(window.occupied(120), 1);
  t.notOk(window.hasEnded('a'), 'an id is forgotten with its call');
  window.addEnded(20, false, 'a');
  t.equal(window.occupied(120), 1, 'reported again after it left, it is already out of the window');
});

t.test('a new window length applies to calls already ended', async (t) => {
  const window = new RollingWindow(1000);
  window.addEnded(0);
  window.windowMs = 100;
  t.equal(window.occupied(100), 0);
  t.equal(freeBefore(1000, 300), 700);
  t.equal(leavesWindowAt(700, 300), 1000);
});
