// docs/errors.md is generated from the two error tables (errors-doc.ts): the committed file is
// what they give, and each code of both tables has its row there.
import t from 'tap';
import { readFileSync } from 'node:fs';
import { ERROR_CODES, KERNEL_ERRORS } from '../src/application.js';
import { renderErrorsDoc } from '../src/errors/errors-doc.js';

const doc = readFileSync(new URL('../../../docs/errors.md', import.meta.url), 'utf8');

/** The rows of the doc's tables: code -> cells after it. */
function rows(markdown: string): Map<string, string[]> {
  const found = new Map<string, string[]>();
  for (const [, code, rest] of markdown.matchAll(/^\| ([A-Z_]+) \| (.+) \|$/gm)) found.set(code, rest.split(' | '));
  return found;
}

t.test('the committed docs/errors.md is the generated one (npm run generate -w @opco-proxy/core)', async (t) => {
  t.equal(doc, renderErrorsDoc());
});

t.test('every HTTP code has its row with its status and whether it is retried', async (t) => {
  const table = rows(doc);
  for (const [code, spec] of Object.entries(ERROR_CODES)) {
    const row = table.get(code);
    if (!t.ok(row, `${code} documented`)) continue;
    t.equal(row![0], 'upstreamStatus' in spec ? "upstream's" : String(spec.status), `${code}: status`);
    t.match(row![1], spec.retryable ? /^yes/ : /^no|^when/, `${code}: retryable`);
    if ('workerRetry' in spec) t.match(row![1], /by jobs and sync batches no/, `${code}: not by workers`);
    t.equal(row![2], spec.when, `${code}: when`);
  }
  t.ok(table.has('METHOD_NOT_ALLOWED') && table.get('METHOD_NOT_ALLOWED')![0] === '405', '405 is there');
  t.ok(table.has('UNSUPPORTED_MEDIA_TYPE') && table.get('UNSUPPORTED_MEDIA_TYPE')![0] === '415', '415 is there');
});

t.test('every kernel code has its row, after the HTTP table, with its message template', async (t) => {
  const kernelSection = doc.slice(doc.indexOf('## Kernel misuse codes'));
  t.ok(
    kernelSection.length > 0 && doc.indexOf('## Kernel misuse codes') > doc.indexOf('| TIMEOUT |'),
    'a section of its own',
  );
  const table = rows(kernelSection);
  for (const [code, { message, config }] of Object.entries(KERNEL_ERRORS)) {
    const row = table.get(code);
    if (!t.ok(row, `${code} documented`)) continue;
    t.equal(row![0], config ? 'yes' : 'no', `${code}: configuration`);
    t.equal(row![1], `\`${message}\``, `${code}: message`);
  }
});
