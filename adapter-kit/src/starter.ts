/**
 * The starter: writes a new adapter package (profile skeleton, fixtures, the conformance test
 * wired) that passes `npm test` as it is written. `opco-proxy new-adapter NAME` and
 * `opco-proxy-adapter new NAME` both call `writeStarter`.
 */
import { existsSync, mkdirSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import {
  ADAPTERS_GUIDE,
  CONFORMANCE_TEST,
  FIXTURES,
  GITIGNORE,
  TSCONFIG,
  packageJson,
  profileSource,
  readme,
  type StarterNames,
} from './starter-files.js';

/** npm's rules for a package name, scoped or not. */
const PACKAGE_NAME = /^(?:@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;

/** `@acme/opco-proxy-adapter-opco-x` -> profile id `opco-x`; `opco-x` -> `opco-x`. */
export function starterNames(name: string): StarterNames {
  if (!PACKAGE_NAME.test(name) || name.length > 214) {
    throw new Error(`"${name}" is not an npm package name: lower case, digits, - . _, optionally @scope/ first`);
  }
  const id = name
    .slice(name.lastIndexOf('/') + 1)
    .replace(/^(opco-proxy-)?adapter-/, '')
    .replace(/[._]/g, '-');
  return { packageName: name, id };
}

/**
 * Writes the package `name` into `dir` (created; it must not exist or be empty) and returns the
 * paths written, relative to `dir`.
 */
export function createAdapterPackage(name: string, dir: string): string[] {
  const names = starterNames(name);
  if (existsSync(dir) && readdirSync(dir).length > 0)
    throw new Error(`${dir} is not empty: the starter only writes a new package`);
  const files: Record<string, string> = {
    'package.json': packageJson(names),
    'tsconfig.json': TSCONFIG,
    '.gitignore': GITIGNORE,
    'README.md': readme(names),
    'src/index.ts': profileSource(names),
    'test/conformance.test.ts': CONFORMANCE_TEST,
  };
  for (const [path, content] of Object.entries(FIXTURES))
    files[`fixtures/${path}`] = `${JSON.stringify(content, null, 2)}\n`;
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return Object.keys(files);
}

/**
 * The commands' starter: without `dir` the package goes to adapters/<id> when `cwd` is the root of
 * a clone of opco-proxy (a workspace, so `npm install` links it to core and the kit), else to
 * ./<id>. Returns what to print: the files written and the next steps.
 */
export function writeStarter(
  name: string,
  options: { dir?: string; cwd?: string } = {},
): { dir: string; files: string[]; message: string } {
  const cwd = options.cwd ?? process.cwd();
  const { id } = starterNames(name);
  const adapters = join(cwd, 'adapters');
  const inClone = existsSync(adapters) && statSync(adapters).isDirectory();
  const dir = resolve(cwd, options.dir ?? (inClone ? join('adapters', id) : id));
  const files = createAdapterPackage(name, dir);
  const shown = relative(cwd, dir) || '.';
  const install = inClone
    ? `  npm install                 (links the new workspace package)\n  cd ${shown} && npm test`
    : `  cd ${shown} && npm install && npm test`;
  const message =
    `wrote ${files.length} files to ${shown}:\n${files.map((file) => `  ${file}`).join('\n')}\n\n` +
    `next:\n${install}     (the conformance suite passes as written)\n` +
    `  then describe your upstream in src/index.ts and record its answers in fixtures/ (${ADAPTERS_GUIDE})`;
  return { dir, files, message };
}
