// D7, issue 11 (memory): `_files` values are cut out of the JSON text and decoded from base64 as
// the text arrives, whatever the chunks it arrives in; JSON.parse then reads the rest. Checked
// against what the service did before: JSON.parse of the whole text, the schema's isBase64 and
// Node's base64 decoder.
import t, { type Test } from 'tap';
import { isBase64 } from '@opco-proxy/schemas';
import { FileCutter, PLACEHOLDER, type CutFile } from '../src/http/file-cutter.js';

const LIMIT = 10 * 1024 * 1024;

/** A tiny deterministic generator, so a failure can be replayed. */
function random(seed: number) {
  let state = seed >>> 0 || 1;
  const next = () => {
    state ^= state << 13;
    state ^= state >>> 17;
    state ^= state << 5;
    return (state >>> 0) / 0x1_0000_0000;
  };
  return { next, int: (n: number) => Math.floor(next() * n) };
}

/**
 * Feeds `text` in chunks of the sizes `sizes` gives (cycled), as a socket might. Each chunk is a
 * copy the cutter may keep a view of; one it says it does not keep is scribbled over, as giving
 * its memory back (releaseChunk) would empty it: a view it keeps without saying so spoils the result.
 */
function cut(
  text: string | Buffer,
  sizes: (i: number) => number,
  limit = LIMIT,
): { value: unknown; files: CutFile[]; invalidJson: boolean } {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  const cutter = new FileCutter(limit);
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const size = Math.max(1, sizes(i));
    const chunk = Buffer.from(bytes.subarray(at, at + size));
    if (!cutter.push(chunk)) chunk.fill(0x7b);
    at += size;
  }
  const skeleton = cutter.end().toString('utf8');
  return {
    value: cutter.invalidJson ? undefined : JSON.parse(skeleton),
    files: cutter.files,
    invalidJson: cutter.invalidJson,
  };
}

/** The file behind a placeholder in the parsed value. */
function fileAt(t: Test, result: { files: CutFile[] }, placeholder: unknown): CutFile {
  t.type(placeholder, 'string');
  t.ok((placeholder as string).startsWith(PLACEHOLDER), `${JSON.stringify(placeholder)} is a placeholder`);
  return result.files[Number((placeholder as string).slice(PLACEHOLDER.length))];
}

const joined = (file: CutFile) => Buffer.concat(file.content);

const CHUNKINGS: Array<[string, (i: number) => number]> = [
  ['whole', () => Number.MAX_SAFE_INTEGER],
  ['1 byte', () => 1],
  ['2 bytes', () => 2],
  ['3 bytes', () => 3],
  ['5 bytes', () => 5],
  ['7, 1, 64k', (i) => [7, 1, 65536][i % 3]],
];

t.test('a file decodes the same whatever the chunks, across 4-character groups and pages', async (t) => {
  const rng = random(7);
  // Sizes around the base64 groups, the first page's doublings and the 768 KiB pages.
  for (const size of [
    0,
    1,
    2,
    3,
    4,
    191,
    192,
    193,
    98_303,
    98_304,
    98_305,
    786_431,
    786_432,
    786_433,
    2 * 786_432 + 5,
  ]) {
    const bytes = Buffer.alloc(size);
    for (let i = 0; i < size; i++) bytes[i] = rng.int(256);
    const body = JSON.stringify({
      numero: 'F-1',
      _files: { facture: bytes.toString('base64') },
      after: [1, { x: '}' }],
    });
    for (const [label, sizes] of size > 100_000
      ? CHUNKINGS.filter(([l]) => l !== '1 byte' && l !== '2 bytes')
      : CHUNKINGS) {
      const result = cut(body, sizes);
      const file = fileAt(t, result, (result.value as any)._files.facture);
      t.equal(file.outcome, size === 0 ? 'empty' : 'valid', `${size} bytes, ${label}`);
      t.equal(file.size, size);
      t.ok(joined(file).equals(bytes), `${size} bytes intact, ${label}`);
      t.ok(
        file.content.slice(0, -1).every((page) => page.length % 3 === 0),
        'every page but the last holds a multiple of 3 bytes',
      );
      t.same((result.value as any).after, [1, { x: '}' }], 'what follows the file is read as it was');
    }
  }
});

t.test('validity and bytes are those of the schema and of Node, for every short value', async (t) => {
  const rng = random(11);
  const alphabet = 'AQgw+/=9z= \n!é';
  const values = [
    '',
    'A',
    'AA',
    'AAA',
    'AAAA',
    'QQ==',
    'QQ=',
    'QQ',
    'QUI=',
    'QUI',
    'Q===',
    '====',
    'AA=A',
    'AAAA====',
    'QR==',
    'QUJD',
    'QUJDRA',
  ];
  for (let i = 0; i < 3000; i++)
    values.push(Array.from({ length: rng.int(10) }, () => alphabet[rng.int(alphabet.length)]).join(''));
  for (const value of values) {
    const result = cut(JSON.stringify({ _files: { a: value } }), () => 1 + rng.int(4));
    const file = fileAt(t, result, (result.value as any)._files.a);
    const expected = value === '' ? 'empty' : isBase64(value) ? 'valid' : 'invalid';
    t.equal(file.outcome, expected, JSON.stringify(value));
    if (expected === 'valid')
      t.ok(joined(file).equals(Buffer.from(value, 'base64')), `bytes of ${JSON.stringify(value)}`);
  }
});

t.test('JSON escapes inside a file are read as the characters they stand for', async (t) => {
  const bytes = Buffer.from('%PDF-1.4 \xff\xfe some bytes that make / and + in base64???', 'latin1');
  const text = bytes.toString('base64');
  t.ok(text.includes('/'), 'the sample has a slash');
  // PHP's json_encode writes `\/`; any encoder may write \u escapes.
  const escaped = text.replace(/\//g, '\\/').replace(/A/g, '\\u0041').replace(/=/g, '\\u003D');
  for (const [label, sizes] of CHUNKINGS) {
    const result = cut(`{"_files":{"cerfa":"${escaped}"}}`, sizes);
    const file = fileAt(t, result, (result.value as any)._files.cerfa);
    t.equal(file.outcome, 'valid', label);
    t.ok(joined(file).equals(bytes), label);
  }
  for (const [name, inside] of [
    ['a line break', 'QUJD\\nRA=='],
    ['a space', 'QUJD RA=='],
    ['a non-ASCII escape', 'QUJD\\u00e9'],
    ['a quote', 'QU\\"JD'],
  ]) {
    const result = cut(`{"_files":{"x":"${inside}"}}`, () => 2);
    t.equal(
      fileAt(t, result, (result.value as any)._files.x).outcome,
      'invalid',
      `${name} is not base64 (as before: no whitespace)`,
    );
  }
});

t.test('a bad character in the middle of a large file is found, and its bytes are not kept', async (t) => {
  const text = Buffer.alloc(3 * 1024 * 1024, 7).toString('base64');
  const broken = `${text.slice(0, 2_000_001)}*${text.slice(2_000_002)}`;
  const result = cut(JSON.stringify({ _files: { good: 'QUJD', bad: broken } }), () => 65536);
  t.equal(fileAt(t, result, (result.value as any)._files.good).outcome, 'valid');
  const bad = fileAt(t, result, (result.value as any)._files.bad);
  t.equal(bad.outcome, 'invalid');
  t.same(bad.content, [], 'nothing kept');
});

t.test('a file over the limit is counted to its end, not kept', async (t) => {
  const result = cut(
    JSON.stringify({
      _files: { big: Buffer.alloc(1001).toString('base64'), small: Buffer.alloc(1000).toString('base64') },
    }),
    () => 100,
    1000,
  );
  const big = fileAt(t, result, (result.value as any)._files.big);
  t.equal(big.outcome, 'valid');
  t.equal(big.size, 1001, 'its size, for the 413');
  t.same(big.content, []);
  t.equal(fileAt(t, result, (result.value as any)._files.small).size, 1000, 'at the limit is fine');
});

t.test('only string values of the top-level `_files` object are cut', async (t) => {
  const cases: Array<[string, string, (value: any) => unknown]> = [
    ['nested _files', '{"cerfa":{"_files":{"a":"QUJD"}}}', (v) => v.cerfa._files.a],
    ['_files inside an array', '[{"_files":{"a":"QUJD"}}]', (v) => v[0]._files.a],
    ['an array under _files', '{"_files":["QUJD"]}', (v) => v._files[0]],
    ['a string _files', '{"_files":"QUJD"}', (v) => v._files],
    ['a deeper value', '{"_files":{"a":{"b":"QUJD"}}}', (v) => v._files.a.b],
    ['a key that only looks like it', '{"x_files":{"a":"QUJD"},"_files ":{"a":"QUJD"}}', (v) => v['x_files'].a],
    [
      'brackets and quotes in strings',
      '{"s":"{\\"_files\\":{\\"a\\":\\"QUJD\\"}}","t":"[[[","_files2":{"a":"QUJD"}}',
      (v) => v._files2.a,
    ],
  ];
  for (const [label, text, pick] of cases) {
    for (const [chunking, sizes] of CHUNKINGS) {
      const result = cut(text, sizes);
      t.same(result.value, JSON.parse(text), `${label} (${chunking}): the value as JSON.parse reads it`);
      t.equal(pick(result.value), 'QUJD', label);
      t.equal(result.files.length, 0, `${label}: nothing cut`);
    }
  }
  // `_files` spelled with escapes is still `_files` to JSON.parse, so it is cut.
  const escaped = cut('{"\\u005ffiles":{"a":"QUJD"},"n":1}', () => 3);
  t.equal(fileAt(t, escaped, (escaped.value as any)._files.a).outcome, 'valid');
  t.equal((escaped.value as any).n, 1);
});

t.test('duplicate keys resolve as JSON.parse does: the last wins', async (t) => {
  const result = cut('{"_files":{"a":"QUJD","a":"REVG"},"_files":{"b":"R0hJ","c":"SktM"}}', () => 4);
  const files = (result.value as any)._files;
  t.same(Object.keys(files), ['b', 'c']);
  t.ok(joined(fileAt(t, result, files.b)).equals(Buffer.from('GHI')));
  t.ok(joined(fileAt(t, result, files.c)).equals(Buffer.from('JKL')));
});

t.test('a file that breaks JSON string rules makes the body invalid JSON', async (t) => {
  for (const [label, text] of [
    ['a raw line break', '{"_files":{"a":"QU\nJD"}}'],
    ['a raw tab', '{"_files":{"a":"QU\tJD"}}'],
    ['an unknown escape', '{"_files":{"a":"QU\\xJD"}}'],
    ['a short \\u escape', '{"_files":{"a":"QU\\u12"}}'],
  ]) {
    for (const [chunking, sizes] of CHUNKINGS) t.equal(cut(text, sizes).invalidJson, true, `${label} (${chunking})`);
    t.throws(() => JSON.parse(text), `${label}: JSON.parse agrees`);
  }
});

t.test('random bodies read as JSON.parse reads them, files as Node decodes them', async (t) => {
  const rng = random(23);
  const scalar = (): unknown =>
    [
      () => rng.int(1000) - 500,
      () => 'v"}{[],:\\' + rng.int(9),
      () => null,
      () => rng.next() < 0.5,
      () => '\u00e9\u4e2d\ud83d\ude00',
    ][rng.int(5)]();
  const value = (depth: number): unknown => {
    if (depth > 3 || rng.next() < 0.4) return scalar();
    if (rng.next() < 0.5) return Array.from({ length: rng.int(4) }, () => value(depth + 1));
    return Object.fromEntries(
      Array.from({ length: rng.int(4) }, (_, i) => [`k${i}${rng.int(3) === 0 ? '"\\' : ''}`, value(depth + 1)]),
    );
  };
  for (let n = 0; n < 300; n++) {
    const files: Record<string, string> = {};
    for (let i = rng.int(4); i > 0; i--)
      files[`r${i}`] = Buffer.from(Array.from({ length: rng.int(300) }, () => rng.int(256))).toString('base64');
    const body = { ...(value(0) as object), _files: files, z: value(1) };
    const text = JSON.stringify(body, null, rng.next() < 0.3 ? 2 : undefined);
    const result = cut(text, () => 1 + rng.int(40));
    const read = result.value as any;
    for (const [role, base64] of Object.entries(files)) {
      const file = fileAt(t, result, read._files[role]);
      t.equal(file.outcome, base64 === '' ? 'empty' : 'valid');
      t.ok(joined(file).equals(Buffer.from(base64, 'base64')), `body ${n}, ${role}`);
      read._files[role] = base64;
    }
    t.same(read, JSON.parse(text), `body ${n} as JSON.parse reads it`);
  }
});

t.test('discard gives back the pages of every file, the one still arriving included', async (t) => {
  const large = Buffer.alloc(2 * 786_432, 1).toString('base64');
  const text = JSON.stringify({ _files: { a: large, b: large } });
  const cutter = new FileCutter(LIMIT);
  cutter.push(Buffer.from(text.slice(0, text.length - 1_000_000))); // b is still arriving
  t.equal(cutter.files.length, 1);
  const pages = cutter.files[0].content;
  t.ok(pages.length >= 2 && pages.every((page) => page.length > 0));
  cutter.discard();
  t.ok(
    pages.every((page) => page.length === 0),
    'their memory is gone: they read empty',
  );
});

t.test('a chunk is kept only for a long run of text outside the files: the others may be given back', async (t) => {
  const file = Buffer.alloc(3 * 65536, 7).toString('base64');
  const text = Buffer.from(JSON.stringify({ note: 'n'.repeat(5000), _files: { a: file }, tail: 1 }));
  const cutter = new FileCutter(LIMIT);
  const kept: boolean[] = [];
  for (let at = 0; at < text.length; at += 65536) kept.push(cutter.push(Buffer.from(text.subarray(at, at + 65536))));
  t.same(
    kept,
    [true, false, false, false, false],
    'the first chunk holds 5,000 bytes of text kept as they came; the rest is the file and a short tail',
  );
  const value = JSON.parse(cutter.end().toString()) as { note: string; tail: number };
  t.equal(value.note.length, 5000);
  t.equal(value.tail, 1);
  t.same(Buffer.concat(cutter.files[0].content), Buffer.alloc(3 * 65536, 7));
  for (const [name, sizes] of CHUNKINGS) {
    const result = cut(text, sizes); // scribbles over every chunk said not to be kept
    t.equal((result.value as { note: string }).note, 'n'.repeat(5000), `${name}: the text kept is intact`);
  }
});
