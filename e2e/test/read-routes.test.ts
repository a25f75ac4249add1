// Every GET route of SPEC 4.3-4.7 and 4.10 over HTTP against the sandbox (common shape), transforms
// included: the four state typos corrected, a bare etats array wrapped (reads-suite.ts).
import t from 'tap';
import { COMMON, readsSuite } from '../src/index.js';

await readsSuite(t, COMMON);
