// Every GET route through the classic-api adapter against the sandbox in the classic shape, with
// the assertions of common-api (reads-suite.ts): snake_case names, state words, DD/MM/YYYY dates
// and 0-based pages never reach the client.
import t from 'tap';
import { CLASSIC, readsSuite } from '../src/index.js';

await readsSuite(t, CLASSIC);
