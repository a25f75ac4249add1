// The pollers suite through classic-api: polls read 0-based pages filtered by a DD/MM/YYYY
// date_modification, and every change is announced in the SPEC's states and dates.
import t from 'tap';
import { CLASSIC, pollersSuite } from '../src/index.js';

pollersSuite(t, CLASSIC);
