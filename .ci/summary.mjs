// Restates tap's closing summary ("# { total: 12, pass: 11, fail: 1, skip: 0 }") as the plain
// line CI reads: "tests: 11 passed, 1 failed, 0 skipped". Each argument is a tap output file,
// or LABEL=FILE for a line per run ("tests: 11 passed, 1 failed, 0 skipped (node v24.1.0, 300 s)").
// Exits 1 when an output has no summary (the run did not get to the end).
import { readFileSync } from 'node:fs';

let missing = false;
for (const arg of process.argv.slice(2)) {
  const at = arg.indexOf('=');
  const [label, file] = at === -1 ? [undefined, arg] : [arg.slice(0, at), arg.slice(at + 1)];
  const suffix = label ? ` (${label})` : '';
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {}
  const lines = text.split('\n').filter((line) => /^# \{ total: \d+/.test(line));
  if (lines.length === 0) {
    console.log(`tests: 0 passed, 1 failed${suffix}`);
    missing = true;
    continue;
  }
  const count = (name) => Number(new RegExp(`${name}: (\\d+)`).exec(lines.at(-1))?.[1] ?? 0);
  console.log(`tests: ${count('pass')} passed, ${count('fail')} failed, ${count('skip') + count('todo')} skipped${suffix}`);
}
process.exit(missing ? 1 : 0);
