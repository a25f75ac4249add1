/**
 * Idle memory (issue 40). Start-up allocates in one burst whose objects mostly live on (modules,
 * the schemas' compiled validators), and V8 answers a burst that survives by growing the young
 * generation (to 2 × 16 MiB on Node 20); an idle process never gives those pages back: 10 of
 * an idle `serve`'s 88 MiB on Node 20, 9 of 98 on Node 24 (`bench/memory.mjs`). Its growth is held while the process starts (this module is the
 * CLI's first import) and allowed again once the process serves, so load grows it as before.
 * An operator's own `--semi-space-growth-factor` is left alone.
 */
import { setFlagsFromString } from 'node:v8';

/** V8's default. */
const GROWTH_FACTOR = 2;
const chosen = [...process.execArgv, process.env.NODE_OPTIONS ?? ''].some((arg) => arg.includes('semi-space'));

if (!chosen) setFlagsFromString('--semi-space-growth-factor=1');

/** The process serves: the young generation grows with the load again. */
export function releaseYoungGeneration(): void {
  if (!chosen) setFlagsFromString(`--semi-space-growth-factor=${GROWTH_FACTOR}`);
}
