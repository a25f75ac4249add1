// Audit records (D32) on the embedded backends.
import t from 'tap';
import { auditSuite } from '../src/index.js';

auditSuite(t, () => undefined);
