// Loaded into the service by `bench/memory.mjs --probe FILE` (node --import): on SIGUSR2 it appends
// one JSON line to $OPCO_MEMORY_PROBE saying where the process's memory is: V8's heap (used, and
// old space), memory outside it (external, of which ArrayBuffers), and the RSS of the mappings by
// kind from /proc/self/smaps: `heap` is malloc's main arena (Buffers, external strings), `anon`
// mostly V8's own pages. RSS that stays in `heap` with nothing live there is freed memory malloc
// has not returned to the system, not garbage. It reads; it never collects.
import { appendFileSync, readFileSync } from 'node:fs';
import v8 from 'node:v8';

const file = process.env.OPCO_MEMORY_PROBE;
const MIB = 1024 * 1024;
const mib = (bytes) => Math.round((bytes / MIB) * 10) / 10;

/** RSS in MiB of the process's mappings: malloc's arena, anonymous mappings, files. */
function mappings() {
  const rss = { heap: 0, anon: 0, file: 0, other: 0 };
  let kind = 'other';
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    const header = /^[0-9a-f]+-[0-9a-f]+ \S+ \S+ \S+ \S+\s*(.*)$/.exec(line);
    if (header)
      kind = header[1] === '[heap]' ? 'heap' : header[1] === '' ? 'anon' : header[1].startsWith('/') ? 'file' : 'other';
    else if (line.startsWith('Rss:')) rss[kind] += Number(/(\d+)/.exec(line)[1]) * 1024;
  }
  return Object.fromEntries(Object.entries(rss).map(([k, v]) => [k, mib(v)]));
}

if (file) {
  process.on('SIGUSR2', () => {
    const usage = process.memoryUsage();
    const old = v8.getHeapSpaceStatistics().find((space) => space.space_name === 'old_space');
    appendFileSync(
      file,
      `${JSON.stringify({
        rss: mib(usage.rss),
        heapUsed: mib(usage.heapUsed),
        oldSpaceUsed: mib(old.space_used_size),
        external: mib(usage.external),
        arrayBuffers: mib(usage.arrayBuffers),
        mappings: mappings(),
      })}\n`,
    );
  });
}
