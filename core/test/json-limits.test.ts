// The depth bound every upstream answer, request body and store write is checked against: exact
// up to the limit, limit + 1 beyond it however deep the value, and never a stack overflow.
import t from 'tap';
import { jsonDepth } from '../src/limits/json-limits.js';

/** `levels` arrays or objects, each the only child of the one above. */
function nested(levels: number, kind: 'array' | 'object'): unknown {
  let value: unknown = 'leaf';
  for (let i = 0; i < levels; i++) value = kind === 'array' ? [value] : { child: value };
  return value;
}

t.test('scalars, dates and bytes are 0; containers count their deepest branch', async (t) => {
  for (const scalar of [null, undefined, 0, 'text', true]) t.equal(jsonDepth(scalar, 64), 0);
  t.equal(jsonDepth(new Date(), 64), 0);
  t.equal(jsonDepth(Buffer.from('[[[]]]'), 64), 0, 'bytes are a leaf, not an array of numbers');
  t.equal(jsonDepth({}, 64), 1);
  t.equal(jsonDepth([], 64), 1);
  t.equal(jsonDepth({ at: new Date(), bytes: Buffer.alloc(3) }, 64), 1, 'a date or bytes below add no level');
  // The deepest branch is the last one, after shallower siblings of both kinds.
  const value = { a: 1, b: [1, 2, { c: 3 }], d: { e: { f: [[{ g: null }]] } } };
  t.equal(jsonDepth(value, 64), 6);
  t.equal(jsonDepth([1, [2, [3, [4]]], 'x'], 64), 4);
});

t.test('exact up to the limit, limit + 1 past it', async (t) => {
  for (const kind of ['array', 'object'] as const) {
    t.equal(jsonDepth(nested(32, kind), 32), 32, `${kind}: at the limit`);
    t.equal(jsonDepth(nested(33, kind), 32), 33, `${kind}: one past`);
    t.equal(jsonDepth(nested(500, kind), 32), 33, `${kind}: far past`);
    t.equal(jsonDepth(nested(1, kind), 0), 1, `${kind}: a limit of 0 refuses any container`);
  }
  // A deep branch after a shallow one, and a shallow one after a deep one.
  t.equal(jsonDepth({ shallow: [1], deep: nested(40, 'object') }, 16), 17);
  t.equal(jsonDepth([nested(40, 'array'), {}], 16), 17);
});

t.test('a hostile value a million levels deep is measured without overflowing the stack', async (t) => {
  // JSON.parse builds it iteratively; a walk that recursed to the bottom would throw RangeError.
  const text = '['.repeat(1_000_000) + ']'.repeat(1_000_000);
  t.equal(jsonDepth(JSON.parse(text), 64), 65);
  t.equal(jsonDepth(nested(1_000_000, 'object'), 1024), 1025);
});

t.test('a limit out of bounds is a programming error', async (t) => {
  t.throws(() => jsonDepth({}, 1025), RangeError);
  t.throws(() => jsonDepth({}, -1), RangeError);
  t.throws(() => jsonDepth({}, Number.NaN), RangeError);
});
