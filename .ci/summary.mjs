// Restates tap's closing summary ("# { total: 12, pass: 11, fail: 1, skip: 0 }") as the plain
// line CI reads: "tests: 11 passed, 1 failed, 0 skipped". Each argument is a tap output file,
// or LABEL=FILE for a line per run ("tests: 11 passed, 1 failed, 0 skipped (node v24.1.0, 300 s)").
// Before those lines it lists every failed assertion with the subtests around it and the start of
// its diagnostic: CI keeps only the end of a long output, and a failure deep in it is otherwise
// lost. Exits 1 when an output has no summary (the run did not get to the end).
import { readFileSync } from 'node:fs';

const DIAGNOSTIC_LINES = 14;

// The failed assertions of one tap output, each as the names of its enclosing subtests, the
// "not ok" line and the first lines of its YAML diagnostic.
function failures(text) {
  const found = [];
  const stack = [];
  const lines = text.split('\n');
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i];
    const subtest = /^(\s*)# Subtest: (.*)$/.exec(line);
    if (subtest) {
      const depth = subtest[1].length / 4;
      stack.length = depth;
      stack[depth] = subtest[2];
      continue;
    }
    const failed = /^(\s*)not ok \d+ - (.*)$/.exec(line);
    if (!failed) continue;
    const depth = failed[1].length / 4;
    // A subtest's own "not ok" only restates its children's failures.
    if (stack[depth] === failed[2].replace(/ # time=.*$/, '')) continue;
    const diagnostic = [];
    for (let j = i + 1; j < lines.length && diagnostic.length < DIAGNOSTIC_LINES; j++) {
      if (!lines[j].startsWith(`${failed[1]}  `)) break;
      diagnostic.push(lines[j].trimEnd());
    }
    found.push({ path: stack.slice(0, depth).filter(Boolean), line: line.trim(), diagnostic });
  }
  return found;
}

let missing = false;
const summaries = [];
for (const arg of process.argv.slice(2)) {
  const at = arg.indexOf('=');
  const [label, file] = at === -1 ? [undefined, arg] : [arg.slice(0, at), arg.slice(at + 1)];
  const suffix = label ? ` (${label})` : '';
  let text = '';
  try {
    text = readFileSync(file, 'utf8');
  } catch {}
  for (const failure of failures(text)) {
    console.log(`failed${suffix}: ${failure.path.join(' > ')}`);
    console.log(`  ${failure.line}`);
    for (const line of failure.diagnostic) console.log(`  ${line}`);
  }
  const lines = text.split('\n').filter((line) => /^# \{ total: \d+/.test(line));
  if (lines.length === 0) {
    summaries.push(`tests: 0 passed, 1 failed${suffix}`);
    missing = true;
    continue;
  }
  const count = (name) => Number(new RegExp(`${name}: (\\d+)`).exec(lines.at(-1))?.[1] ?? 0);
  summaries.push(
    `tests: ${count('pass')} passed, ${count('fail')} failed, ${count('skip') + count('todo')} skipped${suffix}`,
  );
}
for (const line of summaries) console.log(line);
process.exit(missing ? 1 : 0);
