// The hub killed (SIGKILL) and restarted, instances on embedded backends (D12, D30).
import t from 'tap';
import { hubOutageSuite } from '../src/index.js';

hubOutageSuite(t, {});
