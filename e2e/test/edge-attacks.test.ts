// Issue 27 on the embedded backends: strangers with invented keys against the real service.
import t from 'tap';
import { edgeAttackSuite } from '../src/index.js';

edgeAttackSuite(t, 'embedded', () => undefined);
