// Restates tap's closing summary ("# { total: 12, pass: 11, fail: 1, skip: 0 }") as the plain
// line CI reads: "tests: 11 passed, 1 failed, 0 skipped".
import { readFileSync } from 'node:fs';

const text = readFileSync(process.argv[2], 'utf8');
const lines = text.split('\n').filter((line) => /^# \{ total: \d+/.test(line));
if (lines.length === 0) {
  console.log('tests: 0 passed, 1 failed');
  process.exit(1);
}
const count = (name) => Number(new RegExp(`${name}: (\\d+)`).exec(lines.at(-1))?.[1] ?? 0);
const failed = count('fail');
console.log(`tests: ${count('pass')} passed, ${failed} failed, ${count('skip') + count('todo')} skipped`);
