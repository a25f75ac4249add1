#!/usr/bin/env node
/**
 * Usage: node deploy/image-tree.mjs DEST   (after `npm run build`)
 *
 * Lays out in DEST what the container image runs: the root package.json and package-lock.json,
 * and every workspace package as `npm pack` makes it (its `files`: built code, never sources or
 * tests), at its workspace path, without the test-only ones. `npm ci --omit=dev` in DEST then
 * installs the production dependencies. The Dockerfile's build stage and .ci/image-check.sh both
 * call this, so the CI check runs the tree the image holds.
 */
import { execFileSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Workspaces that only test the others: not in the image. */
const TEST_ONLY = new Set(['e2e']);

const dest = resolve(process.argv[2] ?? '');
if (!process.argv[2]) {
  console.error('usage: node deploy/image-tree.mjs DEST');
  process.exit(2);
}
const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const manifest = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8'));
const workspaces = JSON.parse(execFileSync('npm', ['query', '.workspace', '--silent'], { cwd: root, encoding: 'utf8' }))
  .map((pkg) => ({ name: pkg.name, path: pkg.location }))
  .filter((pkg) => !TEST_ONLY.has(pkg.path));

mkdirSync(dest, { recursive: true });
const packs = mkdtempSync(join(tmpdir(), 'opco-image-packs-'));
try {
  // One npm process packs them all (one each would take a second apiece).
  const packed = JSON.parse(
    execFileSync('npm', ['pack', '--workspaces', '--json', '--silent', '--pack-destination', packs], {
      cwd: root,
      encoding: 'utf8',
    }),
  );
  for (const { name, path } of workspaces) {
    const { filename } = packed.find((entry) => entry.name === name);
    const target = join(dest, path);
    mkdirSync(target, { recursive: true });
    execFileSync('tar', ['-xzf', join(packs, filename), '-C', target, '--strip-components=1']);
    const pkg = JSON.parse(readFileSync(join(target, 'package.json'), 'utf8'));
    // A package whose `files` leave out its entry point would install and then fail at start-up.
    if (pkg.main && !existsSync(join(target, pkg.main)))
      throw new Error(
        `${name}: ${pkg.main} is not in its package (check "files" in ${path}/package.json, and run npm run build first)`,
      );
  }
} finally {
  rmSync(packs, { recursive: true, force: true });
}
// The workspaces the image holds; the lock file still names the test-only ones, which npm ci skips.
writeFileSync(
  join(dest, 'package.json'),
  `${JSON.stringify({ ...manifest, workspaces: workspaces.map((pkg) => pkg.path) }, null, 2)}\n`,
);
copyFileSync(join(root, 'package-lock.json'), join(dest, 'package-lock.json'));
console.log(`image tree in ${dest}: ${workspaces.map((pkg) => pkg.path).join(', ')}`);
