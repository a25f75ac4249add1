// The cache's in-process layer: bounded by entries and by bytes, expiring on the injected clock.
import t from 'tap';
import { TestClock } from '@opco-proxy/core/testing';
import { AnswerMemory } from '../src/answer-memory.js';

const text = (n: number) => JSON.stringify('x'.repeat(n - 2));
const bytes = (n: number) => Buffer.from(text(n));
/** What the memory holds under `key`, as text (it keeps the UTF-8 bytes). */
const read = (memory: AnswerMemory, key: string) => memory.get(key)?.toString('utf8');

t.test('bounded by entries: the least recently used goes first', async (t) => {
  const clock = new TestClock({ frozen: true });
  const memory = new AnswerMemory({ maxEntries: 2, maxBytes: 1_000_000 }, clock);
  memory.set('a', bytes(10), clock.now() + 1000);
  memory.set('b', bytes(10), clock.now() + 1000);
  t.equal(read(memory, 'a'), text(10), 'a read: b is now the least recent');
  memory.set('c', bytes(10), clock.now() + 1000);
  t.equal(memory.entries, 2);
  t.equal(memory.get('b'), undefined, 'b evicted');
  t.equal(read(memory, 'a'), text(10));
  t.equal(read(memory, 'c'), text(10));
});

t.test('bounded by bytes: older answers leave room, one too large is not kept', async (t) => {
  const clock = new TestClock({ frozen: true });
  const memory = new AnswerMemory({ maxEntries: 100, maxBytes: 250 }, clock);
  for (const key of ['a', 'b', 'c']) memory.set(key, bytes(100), clock.now() + 1000);
  t.ok(memory.bytes <= 250, `${memory.bytes} bytes kept`);
  t.equal(memory.entries, 2);
  t.equal(memory.get('a'), undefined, 'the oldest made room');
  memory.set('huge', bytes(300), clock.now() + 1000);
  t.equal(memory.get('huge'), undefined, 'larger than the whole budget: not kept');
  t.equal(read(memory, 'c'), text(100), 'and nothing evicted for it');
});

t.test('an answer lives until its own expiry on the injected clock, to the millisecond', async (t) => {
  const clock = new TestClock({ frozen: true });
  const memory = new AnswerMemory({ maxEntries: 10, maxBytes: 10_000 }, clock);
  memory.set('a', bytes(10), clock.now() + 60_000);
  await clock.advance(59_999);
  t.equal(read(memory, 'a'), text(10), 'alive until its last millisecond');
  await clock.advance(1);
  t.equal(memory.get('a'), undefined, 'expired');
  t.equal(memory.entries, 0, 'and dropped');
  memory.set('late', bytes(10), clock.now());
  t.equal(memory.get('late'), undefined, 'an answer already expired is not kept');
});

t.test('bounded in UTF-8 bytes, not in characters', async (t) => {
  const clock = new TestClock({ frozen: true });
  const memory = new AnswerMemory({ maxEntries: 10, maxBytes: 1_000 }, clock);
  const accented = JSON.stringify({ nom: 'Élodie Lefèvre', ville: 'Besançon' });
  memory.set('a', Buffer.from(accented), clock.now() + 1000);
  t.same(memory.get('a'), Buffer.from(accented, 'utf8'));
  t.equal(memory.bytes, Buffer.byteLength(accented), `${memory.bytes} bytes: each accented letter counts two`);
  // Four-byte characters: the budget is of bytes, not of UTF-16 units (482 of them here).
  const smileys = JSON.stringify('🙂'.repeat(240));
  memory.set('b', Buffer.from(smileys), clock.now() + 1000);
  t.equal(memory.bytes, Buffer.byteLength(smileys), '962 bytes counted');
  t.equal(memory.get('a'), undefined, 'and the first answer made room for them');
});
