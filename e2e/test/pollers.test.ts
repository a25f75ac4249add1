// D21, D22: the pollers suite in front of the common upstream shape.
import t from 'tap';
import { COMMON, pollersSuite } from '../src/index.js';

pollersSuite(t, COMMON);
