// SPEC 2.6, 3.2, 4.14, D19, D22: the sync suite in front of the common upstream shape.
import t from 'tap';
import { COMMON, syncSuite } from '../src/index.js';

await syncSuite(t, COMMON);
