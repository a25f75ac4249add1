// Async jobs end to end on the embedded store and queue.
import t from 'tap';
import { jobsSuite } from '../src/index.js';

jobsSuite(t, () => ({}));
