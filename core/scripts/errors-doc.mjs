#!/usr/bin/env node
/**
 * Writes docs/errors.md from the error tables (core/src/errors/errors-doc.ts), on the built JS.
 *
 *   node scripts/errors-doc.mjs           write the file
 *   node scripts/errors-doc.mjs --check   exit 1 when the file on disk is not what the tables give
 *                                         (run by `npm run check --workspaces`, before the tests)
 */
import { readFileSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { renderErrorsDoc } from '../dist/src/errors/errors-doc.js';

const file = fileURLToPath(new URL('../../docs/errors.md', import.meta.url));
const doc = renderErrorsDoc();

if (process.argv.includes('--check')) {
  let current = '';
  try {
    current = readFileSync(file, 'utf8');
  } catch {
    // a missing file differs like any other
  }
  if (current !== doc) {
    console.error(
      'docs/errors.md is not what the error tables give: run `npm run generate -w @opco-proxy/core` and commit it',
    );
    process.exit(1);
  }
} else {
  writeFileSync(file, doc);
}
