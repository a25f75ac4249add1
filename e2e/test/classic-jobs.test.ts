// The async POST routes in front of the classic upstream shape: the jobs suite of common-api, run
// through the classic-api adapter (snake_case metadata in part `metadata`, DD/MM/YYYY dates,
// answers' state words mapped, no certificats route).
import t from 'tap';
import { CLASSIC, jobsSuite } from '../src/index.js';

jobsSuite(t, () => ({}), CLASSIC);
