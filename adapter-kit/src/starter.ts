/**
 * The starter: writes a new adapter package (profile skeleton, fixtures, the conformance test
 * wired) that passes `npm test` as it is written. `opco-proxy-adapter new NAME` calls it, and the
 * main CLI's `new-adapter` is meant to.
 */
import { existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { CONFORMANCE_TEST, FIXTURES, GITIGNORE, TSCONFIG, packageJson, profileSource, readme, type StarterNames } from './starter-files.js';

/** npm's rules for a package name, scoped or not. */
const PACKAGE_NAME = /^(?:@[a-z0-9][a-z0-9._-]*\/)?[a-z0-9][a-z0-9._-]*$/;

/** `@acme/opco-proxy-adapter-opco-x` -> profile id `opco-x`; `opco-x` -> `opco-x`. */
export function starterNames(name: string): StarterNames {
  if (!PACKAGE_NAME.test(name) || name.length > 214) {
    throw new Error(`"${name}" is not an npm package name: lower case, digits, - . _, optionally @scope/ first`);
  }
  const id = name.slice(name.lastIndexOf('/') + 1).replace(/^(opco-proxy-)?adapter-/, '').replace(/[._]/g, '-');
  return { packageName: name, id };
}

/**
 * Writes the package `name` into `dir` (created; it must not exist or be empty) and returns the
 * paths written, relative to `dir`.
 */
export function createAdapterPackage(name: string, dir: string): string[] {
  const names = starterNames(name);
  if (existsSync(dir) && readdirSync(dir).length > 0) throw new Error(`${dir} is not empty: the starter only writes a new package`);
  const files: Record<string, string> = {
    'package.json': packageJson(names),
    'tsconfig.json': TSCONFIG,
    '.gitignore': GITIGNORE,
    'README.md': readme(names),
    'src/index.ts': profileSource(names),
    'test/conformance.test.ts': CONFORMANCE_TEST,
  };
  for (const [path, content] of Object.entries(FIXTURES)) files[`fixtures/${path}`] = `${JSON.stringify(content, null, 2)}\n`;
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(dir, path)), { recursive: true });
    writeFileSync(join(dir, path), content);
  }
  return Object.keys(files);
}
