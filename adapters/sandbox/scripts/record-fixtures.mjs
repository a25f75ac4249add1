#!/usr/bin/env node
// Records the sandbox's answers as adapter-kit fixtures: record-fixtures.mjs common|classic OUT_DIR
// (src/fixture-recorder.ts). Run from a built tree (`npm run build` at the root).
import { recordFixtures } from '../dist/src/fixture-recorder.js';

const [shape, outDir] = process.argv.slice(2);
if (!['common', 'classic'].includes(shape) || !outDir) {
  console.error('usage: record-fixtures.mjs common|classic OUT_DIR');
  process.exit(2);
}
for (const path of await recordFixtures(shape, outDir)) console.log(path);
