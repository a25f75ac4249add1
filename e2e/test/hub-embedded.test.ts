// The hub end to end with instances on embedded backends (SPEC 1.1 step 4, D11, D26, D29).
import t from 'tap';
import { hubSuite } from '../src/index.js';

hubSuite(t, { hubStore: { type: 'embedded' } });
