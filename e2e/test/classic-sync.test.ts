// The sync suite through classic-api: etats pages counted from 0 upstream, dossiers fetched in
// batches of 20 (the classic liste maximum), every record in the SPEC's names and dates.
import t from 'tap';
import { CLASSIC, syncSuite } from '../src/index.js';

await syncSuite(t, CLASSIC);
