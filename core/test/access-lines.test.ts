// The access lines' batch (observability/logger.ts): lines are handed on joined, in order, once
// the batch holds its characters, and at once when flushed (the periodic write and the exit).
import t from 'tap';
import { pino } from 'pino';
import { LineBatch } from '../src/observability/logger.js';

t.test('lines go out joined, in order, once the batch holds its characters', async (t) => {
  const written: string[] = [];
  const batch = new LineBatch((text) => written.push(text), 200);
  t.teardown(() => batch.stop());
  for (let i = 0; i < 9; i++) batch.write(`line ${i} ${'x'.repeat(12)}\n`);
  t.same(written, [], 'held below 200 characters (9 lines of 20)');
  batch.write(`line 9 ${'x'.repeat(12)}\n`);
  t.equal(written.length, 1, 'one write for the ten lines');
  t.same(
    written[0].split('\n').filter(Boolean),
    Array.from({ length: 10 }, (_, i) => `line ${i} ${'x'.repeat(12)}`),
    'every line, in order',
  );
  batch.write('held\n');
  batch.flush();
  t.same(written.slice(1), ['held\n'], 'a flush writes what is held at once');
  batch.flush();
  t.equal(written.length, 2, 'and nothing when nothing is held');
});

t.test('pino writes its lines through the batch, each a whole JSON line', async (t) => {
  const written: string[] = [];
  const batch = new LineBatch((text) => written.push(text), 4096);
  t.teardown(() => batch.stop());
  const log = pino({ base: { service: 'opco-proxy' } }, batch);
  for (let i = 0; i < 100; i++) log.info({ requestId: `r-${i}`, status: 200 }, 'request');
  batch.flush();
  t.ok(written.length >= 2, `over 4 KiB: more than one write (${written.length})`);
  const lines = written
    .join('')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  t.same(
    lines.map((line) => line.requestId),
    Array.from({ length: 100 }, (_, i) => `r-${i}`),
  );
  t.match(lines[0], { msg: 'request', service: 'opco-proxy', status: 200 });
  log.info('after');
  await new Promise<void>((resolve) => log.flush(() => resolve()));
  t.match(written.at(-1), /"msg":"after"/, "pino's flush(cb) writes what is held, then calls back");
});
