// Issue 38: a request body's values, fields per object, items per array and depth are counted as
// it streams in, whatever the chunks, exactly on valid JSON (checked against a walk of the parsed
// value), and a `_files` name that is not a role is refused as soon as its key ends.
import t from 'tap';
import { BodyBoundsScanner, FILE_ROLES, UNKNOWN_ROLE } from '../src/http/body-bounds.js';
import { DEFAULT_BODY_BOUNDS, MAX_BODY_DEPTH, type BodyBounds } from '../src/limits/json-limits.js';
import { isServiceError } from '../src/errors/errors.js';

const WIDE: BodyBounds = {
  bodyValues: Number.MAX_SAFE_INTEGER,
  jsonBytes: Number.MAX_SAFE_INTEGER,
  objectKeys: Number.MAX_SAFE_INTEGER,
  arrayItems: Number.MAX_SAFE_INTEGER,
};
const ROLES = new Set(FILE_ROLES);

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

/** Feeds `text` in chunks of `size` bytes; the error thrown, or undefined when within the bounds. */
function scan(
  text: string | Buffer,
  bounds: Partial<BodyBounds>,
  size = Number.MAX_SAFE_INTEGER,
  roles?: ReadonlySet<string>,
): { errors?: string[]; at?: number } | undefined {
  const bytes = Buffer.isBuffer(text) ? text : Buffer.from(text);
  const scanner = new BodyBoundsScanner({ ...WIDE, ...bounds }, roles);
  for (let at = 0; at < bytes.length; at += size) {
    try {
      scanner.push(Buffer.from(bytes.subarray(at, at + size)));
    } catch (err) {
      if (!isServiceError(err) || err.code !== 'VALIDATION_ERROR' || err.status !== 400) throw err;
      return { errors: err.errors, at };
    }
  }
  return undefined;
}

interface Container {
  kind: 'object' | 'array';
  count: number;
  path: string;
  /** When its last entry starts, in the order the text is read. */
  last: number;
}

/** What the scanner should count, from the parsed value: its values, depth and containers. */
function walk(value: unknown): { values: number; depth: number; containers: Container[] } {
  const containers: Container[] = [];
  let clock = 0;
  let values = 0;
  let deepest = 0;
  const visit = (node: unknown, depth: number, path: string) => {
    values += 1;
    if (node === null || typeof node !== 'object') return;
    deepest = Math.max(deepest, depth + 1);
    const entries = Array.isArray(node) ? node.map((v, i) => [String(i), v] as const) : Object.entries(node);
    const container: Container = {
      kind: Array.isArray(node) ? 'array' : 'object',
      count: entries.length,
      path,
      last: -1,
    };
    containers.push(container);
    for (const [key, child] of entries) {
      container.last = ++clock;
      visit(child, depth + 1, path === 'body' ? key : `${path}.${key}`);
    }
  };
  visit(value, 0, 'body');
  return { values, depth: deepest, containers };
}

/** The container the scanner names when `kind`'s bound is one less than the most any has: the first to reach that most. */
function fullest(containers: Container[], kind: Container['kind']): Container | undefined {
  const most = Math.max(0, ...containers.filter((c) => c.kind === kind).map((c) => c.count));
  return containers.filter((c) => c.kind === kind && c.count === most).sort((a, b) => a.last - b.last)[0];
}

/** Strings that look like structure: quotes, brackets, commas, colons, escapes, backslash runs. */
const TRICKY = [
  '',
  'a',
  '"',
  '\\',
  '\\\\',
  '\\"',
  '{',
  '}',
  '[',
  ']',
  ',',
  ':',
  '"]}',
  '\\"\\\\"',
  'é',
  '\u2028',
  'a,b:c{d[e',
  '\\\\\\',
];

function randomValue(rng: ReturnType<typeof random>, depth: number): unknown {
  const pick = rng.int(depth > 6 ? 4 : 7);
  if (pick === 0) return TRICKY[rng.int(TRICKY.length)] + TRICKY[rng.int(TRICKY.length)];
  if (pick === 1) return rng.int(3) === 0 ? -rng.next() * 1e6 : rng.int(1000);
  if (pick === 2) return [true, false, null][rng.int(3)];
  if (pick === 3) return 'x'.repeat(rng.int(200));
  if (pick === 4 || pick === 5) {
    const object: Record<string, unknown> = {};
    for (let i = rng.int(6); i > 0; i--) object[TRICKY[rng.int(TRICKY.length)] + i] = randomValue(rng, depth + 1);
    return object;
  }
  return Array.from({ length: rng.int(6) }, () => randomValue(rng, depth + 1));
}

t.test('counts exactly what a walk of the parsed value counts, whatever the chunks and the spacing', async (t) => {
  const rng = random(38);
  for (let round = 0; round < 200; round++) {
    const value = { data: randomValue(rng, 0), list: [randomValue(rng, 1), randomValue(rng, 1)] };
    const text = JSON.stringify(value, null, round % 3 === 0 ? 2 : undefined);
    const { values, containers } = walk(value);
    const keys = fullest(containers, 'object')!;
    const items = fullest(containers, 'array');
    for (const size of [1, 2, 3, 7, 64, Number.MAX_SAFE_INTEGER]) {
      const exact = { bodyValues: values, objectKeys: keys.count, arrayItems: Math.max(items?.count ?? 0, 1) };
      if (scan(text, exact, size) !== undefined)
        t.fail(`round ${round}, chunks of ${size}: refused at the exact counts ${JSON.stringify(exact)}: ${text}`);
      t.same(
        scan(text, { bodyValues: values - 1 }, size)?.errors,
        [`body: Must contain at most ${values - 1} values`],
        `round ${round}, chunks of ${size}: values`,
      );
      t.same(
        scan(text, { objectKeys: keys.count - 1 }, size)?.errors,
        [`${keys.path}: Must contain at most ${keys.count - 1} fields`],
        `round ${round}, chunks of ${size}: fields`,
      );
      if (items && items.count > 1) {
        t.same(
          scan(text, { arrayItems: items.count - 1 }, size)?.errors,
          [`${items.path}: Must contain at most ${items.count - 1} items`],
          `round ${round}, chunks of ${size}: items`,
        );
      }
    }
  }
});

t.test('names where a bound is passed, as validation names a path', async (t) => {
  t.same(scan('{"a":[{"b":[1,2,3]}]}', { arrayItems: 2 })?.errors, ['a.0.b: Must contain at most 2 items']);
  t.same(scan('{"lignes":[{},{},{"x":1,"y":2}]}', { objectKeys: 1 })?.errors, [
    'lignes.2: Must contain at most 1 fields',
  ]);
  t.same(scan('[1,2,3]', { arrayItems: 2 })?.errors, ['body: Must contain at most 2 items']);
  t.same(scan('{"a":1,"b":2}', { objectKeys: 1 })?.errors, ['body: Must contain at most 1 fields']);
  t.same(
    scan('{"\\u006cignes":[1,2]}', { arrayItems: 1 })?.errors,
    ['lignes: Must contain at most 1 items'],
    'an escaped key is decoded',
  );
  t.same(
    scan(`{"${'k'.repeat(100)}":[1,2]}`, { arrayItems: 1 })?.errors,
    [`${'k'.repeat(64)}…: Must contain at most 1 items`],
    'a long key is cut',
  );
  t.equal(scan('[]', { arrayItems: 1 }), undefined, 'an empty array has no item');
  t.equal(scan('{}', { objectKeys: 1, bodyValues: 1 }), undefined, 'an empty object: one value, no field');
  t.equal(scan('"a,b,c"', { bodyValues: 1 }), undefined, 'a string is one value');
});

t.test('depth: MAX_BODY_DEPTH levels pass, one more is refused at its bracket, however deep the rest', async (t) => {
  const deep = (levels: number) => `{"cerfa":${'['.repeat(levels - 1)}1${']'.repeat(levels - 1)}}`;
  t.equal(scan(deep(MAX_BODY_DEPTH), {}), undefined);
  t.same(scan(deep(MAX_BODY_DEPTH + 1), {})?.errors, [`body: nested deeper than ${MAX_BODY_DEPTH} levels`]);
  const hostile = scan(deep(1_000_000), {}, 65536);
  t.same(hostile?.errors, [`body: nested deeper than ${MAX_BODY_DEPTH} levels`]);
  t.equal(hostile?.at, 0, 'refused in the first chunk');
  t.equal(
    scan('{"a":"[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[[["}', {}),
    undefined,
    'brackets in a string are text',
  );
});

t.test('a million keys are refused at the first one past the bound, in the first chunk', async (t) => {
  const parts = ['{'];
  for (let i = 0; i < 1_000_000; i++) parts.push(`"k${i}":1,`);
  const text = Buffer.from(`${parts.join('')}"end":1}`);
  const started = process.hrtime.bigint();
  const refused = scan(text, DEFAULT_BODY_BOUNDS, 65536);
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  t.same(refused?.errors, [`body: Must contain at most ${DEFAULT_BODY_BOUNDS.objectKeys} fields`]);
  t.equal(refused?.at, 0);
  t.ok(ms < 50, `refused in ${ms.toFixed(2)} ms`);
});

t.test('_files: roles only, refused when the key ends, before the file starts', async (t) => {
  t.same(
    FILE_ROLES,
    ['cerfa', 'facture', 'convention', 'certificat', 'document'],
    'the roles of the files schema (SPEC 4.0.4)',
  );
  const all = { _files: Object.fromEntries(FILE_ROLES.map((role) => [role, 'QUJD'])) };
  t.equal(scan(JSON.stringify(all), {}, 1, ROLES), undefined, 'the five roles');
  t.same(scan('{"_files":{"cerfa":"QUJD","foo":"QUJD"}}', {}, undefined, ROLES)?.errors, [
    `_files.foo: ${UNKNOWN_ROLE}`,
  ]);
  t.same(scan('{"_files":{"../x":"QUJD"}}', {}, undefined, ROLES)?.errors, [`_files.../x: ${UNKNOWN_ROLE}`]);
  t.same(
    scan('{"\\u005ffiles":{"foo":"QUJD"}}', {}, undefined, ROLES)?.errors,
    [`_files.foo: ${UNKNOWN_ROLE}`],
    '_files spelled with an escape',
  );
  t.equal(scan('{"_files":{"\\u0063erfa":"QUJD"}}', {}, undefined, ROLES), undefined, 'a role spelled with an escape');
  t.same(scan(`{"_files":{"cerfa":"QUJD","${'a'.repeat(70)}":"QUJD"}}`, {}, 5, ROLES)?.errors, [
    `_files.${'a'.repeat(64)}…: ${UNKNOWN_ROLE}`,
  ]);
  t.same(
    scan('{"_files":{"cerfa":{"nested":"x"},"foo":"x"}}', {}, undefined, ROLES)?.errors,
    [`_files.foo: ${UNKNOWN_ROLE}`],
    'still checked after a nested value',
  );
  // Where the roles are not checked: elsewhere than the body's own `_files`, or an operation without files.
  for (const text of [
    '{"cerfa":{"_files":{"foo":"QUJD"}}}',
    '[{"_files":{"foo":"QUJD"}}]',
    '{"_files":[{"foo":1}]}',
    '{"x_files":{"foo":1}}',
    '{"a":{"foo":1},"_files":{}}',
  ]) {
    t.equal(scan(text, {}, 3, ROLES), undefined, text);
  }
  t.equal(scan('{"_files":{"foo":"QUJD"}}', {}), undefined, 'no roles given: no check');
  // Refused in the chunk where the name ends: the cutter, fed after the scanner, never sees the file.
  const name = '{"note":"x","_files":{"foo"';
  const body = Buffer.from(`${name}:"${'QUJD'.repeat(100_000)}"}}`);
  t.equal(scan(body, {}, name.length, ROLES)?.at, 0, 'the chunk ending with the name is refused');
  // 200 files under 200 names: the first that is not a role is named.
  const many = { _files: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`f${i}`, 'QQ=='])) };
  t.same(scan(JSON.stringify(many), DEFAULT_BODY_BOUNDS, 65536, ROLES)?.errors, [`_files.f0: ${UNKNOWN_ROLE}`]);
});

t.test("the defaults leave room for the spec's largest real bodies", async (t) => {
  const lignes = Array.from({ length: 2_000 }, (_, i) => ({
    montant: 1,
    natureLigne: 'PEDAGOGIE',
    quantite: 1,
    numeroEcheance: 1,
    codificationEcheance: 1,
    numeroDeca: 'DECA-2025-000001',
    numeroDossier: `DOS-${i}`,
  }));
  const facture = {
    montantTotal: 1,
    numero: 'F',
    dateEmission: '2025-01-01',
    ibanEmetteur: 'FR7630006000011234567890189',
    siretEmetteur: '98765432109876',
    estCertificatRealisation: true,
    lignes,
  };
  const text = JSON.stringify(facture);
  t.equal(scan(text, DEFAULT_BODY_BOUNDS, 65536, ROLES), undefined, 'a facture of 2,000 lignes of 7 fields');
  t.ok(walk(facture).values < DEFAULT_BODY_BOUNDS.bodyValues, `${walk(facture).values} values`);
  t.ok(text.length < DEFAULT_BODY_BOUNDS.jsonBytes / 2, `${text.length} bytes`);
});

t.test("jsonBytes: the JSON outside the files is bounded, the files' contents are not counted", async (t) => {
  const file = 'QUJD'.repeat(50_000); // 200,000 bytes of base64
  const body = JSON.stringify({ note: 'n'.repeat(1000), _files: { cerfa: file, facture: file } });
  t.equal(scan(body, { jsonBytes: 1100 }, 4096, ROLES), undefined, 'two files of 200 KB beside 1 KB of JSON');
  const refused = new BodyBoundsScanner({ ...WIDE, jsonBytes: 1100 }, ROLES);
  t.throws(() => refused.push(Buffer.from(JSON.stringify({ note: 'n'.repeat(1100) }))), {
    code: 'PAYLOAD_TOO_LARGE',
    status: 413,
    message: 'request body is over the 1100-byte limit for its JSON outside _files',
  });
  const noFiles = new BodyBoundsScanner({ ...WIDE, jsonBytes: 100_000 });
  t.throws(
    () => noFiles.push(Buffer.from(body)),
    { code: 'PAYLOAD_TOO_LARGE' },
    'an operation without files counts every byte',
  );
  const keysCount = new BodyBoundsScanner({ ...WIDE, jsonBytes: 10 }, ROLES);
  t.throws(
    () => keysCount.push(Buffer.from(`{"_files":{"cerfa":"${file}"}}`)),
    { code: 'PAYLOAD_TOO_LARGE' },
    'the keys and punctuation of _files count',
  );
});

t.test("the defaults are the kernel config's (limits)", async (t) => {
  const { loadSchema, schemaIds } = await import('@opco-proxy/schemas');
  const limits = (loadSchema(schemaIds.kernelConfig).properties as any).limits.properties;
  for (const [key, value] of Object.entries(DEFAULT_BODY_BOUNDS)) t.equal(limits[key]?.default, value, `limits.${key}`);
});
