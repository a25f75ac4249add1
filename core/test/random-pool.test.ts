// Random ids and IVs come from a pool refilled 4 KiB at a time (crypto.ts): every draw is new
// bytes, across refills, of the length asked, and a value once handed out never changes.
import t from 'tap';
import { randomHex, seal, unseal } from '../src/application.js';

t.test('randomHex: the length asked, never the same value twice across many refills', async (t) => {
  const seen = new Set<string>();
  // 16-byte draws: 256 per 4 KiB pool, so 5,000 draws go through about twenty refills.
  for (let i = 0; i < 5000; i++) seen.add(randomHex(16));
  t.equal(seen.size, 5000, 'all distinct');
  t.ok(
    [...seen].every((hex) => /^[0-9a-f]{32}$/.test(hex)),
    '32 hex characters each',
  );
  t.match(randomHex(5000), /^[0-9a-f]{10000}$/, 'more than the pool holds, drawn apart');
  t.equal(randomHex(0), '');
});

t.test('seal: a fresh IV for every record, and what was sealed opens again', async (t) => {
  const key = Buffer.alloc(32, 7);
  const sealed = Array.from({ length: 2000 }, (_, i) => seal(key, `record ${i}`, `id-${i}`));
  t.equal(new Set(sealed.map((s) => s.iv)).size, 2000, 'no IV used twice');
  t.ok(
    sealed.every((s) => Buffer.from(s.iv, 'base64').length === 12),
    '12-byte IVs',
  );
  t.equal(unseal(key, sealed[1234], 'id-1234').toString(), 'record 1234');
});

t.test("a drawn value is the caller's own: later draws do not change it", async (t) => {
  const key = Buffer.alloc(32, 9);
  const first = seal(key, 'x');
  const ivBefore = first.iv;
  for (let i = 0; i < 1000; i++) seal(key, 'y');
  t.equal(first.iv, ivBefore);
  t.equal(unseal(key, first).toString(), 'x', 'still opens with the IV it was sealed with');
});
