// What each published package would ship (docs/releasing.md): one `npm pack --dry-run` of every
// workspace, then each package's manifest and files as the registry would get them.
import t from 'tap';
import { execFile } from 'node:child_process';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url)).replace(/\/$/, '');

interface Manifest {
  name: string;
  version: string;
  private?: boolean;
  description?: string;
  keywords?: string[];
  license?: string;
  repository?: { type?: string; url?: string; directory?: string };
  engines?: { node?: string };
  main?: string;
  types?: string;
  exports?: Record<string, string>;
  bin?: Record<string, string>;
  files?: string[];
  workspaces?: string[];
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
}
interface Packed {
  name: string;
  version: string;
  files: Array<{ path: string }>;
}

const readManifest = (dir: string): Manifest =>
  JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as Manifest;
const root = readManifest('.');
/** Workspace directories, the globs of the root's `workspaces` expanded (one level, as they are written). */
const workspaces = (root.workspaces ?? []).flatMap((entry) =>
  entry.endsWith('/*')
    ? readdirSync(join(ROOT, entry.slice(0, -2)), { withFileTypes: true })
        .filter(
          (dirent) => dirent.isDirectory() && existsSync(join(ROOT, entry.slice(0, -2), dirent.name, 'package.json')),
        )
        .map((dirent) => `${entry.slice(0, -2)}/${dirent.name}`)
    : [entry],
);
/** Workspaces that only test the others: private, never published. */
const TEST_ONLY = new Set(['e2e']);
const KEYWORDS: Record<string, string> = {
  plugins: 'opco-proxy-plugin',
  drivers: 'opco-proxy-driver',
  adapters: 'opco-proxy-adapter',
};
/** Dependency specs npm can only resolve inside this clone. */
const LOCAL_SPEC = /^(file:|link:|workspace:|portal:|\.{0,2}\/)/;

const { stdout } = await promisify(execFile)('npm', ['pack', '--dry-run', '--json', '--workspaces', '--silent'], {
  cwd: ROOT,
  maxBuffer: 64 * 1024 * 1024,
});
const packed = new Map((JSON.parse(stdout) as Packed[]).map((entry) => [entry.name, entry]));

t.test('the root and the test-only workspaces are private, every other workspace is published', async (t) => {
  t.equal(root.private, true, 'root');
  t.ok(workspaces.length >= 17, `${workspaces.length} workspaces found`);
  for (const dir of workspaces) {
    const pkg = readManifest(dir);
    if (TEST_ONLY.has(dir)) t.equal(pkg.private, true, `${dir} is private`);
    else t.not(pkg.private, true, `${dir} (${pkg.name}) is publishable`);
    t.ok(packed.has(pkg.name), `npm pack lists ${pkg.name}`);
  }
});

for (const dir of workspaces.filter((path) => !TEST_ONLY.has(path))) {
  const pkg = readManifest(dir);
  t.test(`${pkg.name} (${dir})`, async (t) => {
    t.ok(pkg.description && pkg.description.length > 20, 'a description');
    t.equal(pkg.license, root.license, `license ${root.license}, as the root`);
    t.same(
      pkg.repository,
      { type: 'git', url: root.repository?.url, directory: dir },
      "repository: the root's, with its directory",
    );
    t.same(pkg.engines, root.engines, 'engines, as the root');
    t.ok(pkg.files?.length, 'files');
    // A command-only package (create-adapter: what `npm create` runs) has no module to import.
    const library = !pkg.bin || pkg.exports !== undefined || pkg.main !== undefined;
    if (library) {
      t.ok(pkg.exports?.['.'], 'exports');
      t.ok(pkg.types, 'types');
    }
    const kind = KEYWORDS[dir.split('/')[0]];
    if (kind) t.ok(pkg.keywords?.includes(kind), `keyword ${kind}`);

    for (const field of ['dependencies', 'devDependencies', 'peerDependencies', 'optionalDependencies'] as const) {
      for (const [name, spec] of Object.entries(pkg[field] ?? {})) {
        t.notMatch(spec, LOCAL_SPEC, `${field}.${name} is not a local path or workspace link: ${spec}`);
        // An exact version would pin siblings a patch release cannot move; `*` would accept any.
        if (name.startsWith('@opco-proxy/')) t.match(spec, /^[\^~>]/, `${field}.${name} is a range: ${spec}`);
      }
    }

    const shipped = packed.get(pkg.name)?.files.map((file) => file.path) ?? [];
    const has = (path: string): boolean => shipped.includes(path.replace(/^\.\//, ''));
    for (const path of ['package.json', 'README.md']) t.ok(has(path), `ships ${path}`);
    const entryPoints = [
      pkg.main,
      pkg.types,
      ...Object.values(pkg.exports ?? {}),
      ...Object.values(pkg.bin ?? {}),
    ].filter((path): path is string => !!path);
    for (const path of entryPoints) t.ok(has(path), `ships ${path} (package.json names it)`);
    if (library)
      t.ok(
        shipped.some((path) => path.startsWith('dist/src/') && path.endsWith('.js')),
        'built code (dist/src)',
      );
    if (existsSync(join(ROOT, dir, 'config.schema.json'))) t.ok(has('config.schema.json'), 'its config.schema.json');
    if (dir === 'schemas') {
      const schemas = readdirSync(join(ROOT, 'schemas/json')).filter((file) => file.endsWith('.schema.json'));
      t.same(
        shipped.filter((path) => path.startsWith('json/')).sort(),
        schemas.map((file) => `json/${file}`).sort(),
        'every JSON Schema of schemas/json',
      );
    }
    if (dir === 'plugins/console')
      t.ok(
        shipped.some((path) => path.startsWith('dist/ui/') && path.endsWith('.html')),
        'the built page (dist/ui)',
      );

    t.same(
      shipped.filter((path) => /(^|\/)test\/|\.test\.js$|^dist\/test\//.test(path)),
      [],
      'no tests',
    );
    t.same(
      shipped.filter((path) => path.startsWith('src/') || (path.endsWith('.ts') && !path.endsWith('.d.ts'))),
      [],
      'no TypeScript sources',
    );
    // The maps would point at src/*.ts, which is not shipped (docs/releasing.md).
    t.same(
      shipped.filter((path) => path.endsWith('.map') || path.endsWith('.tsbuildinfo')),
      [],
      'no source maps, no build info',
    );
    const local = shipped.filter((path) => readFileSync(join(ROOT, dir, path), 'utf8').includes(ROOT));
    t.same(local, [], `no file names the clone's path (${ROOT})`);
  });
}
