// The adapter kit over common-api and the answers recorded from the sandbox in the common shape.
import t from 'tap';
import { conformance } from '@opco-proxy/adapter-kit';
import { profile } from '../src/index.js';

await conformance(t, { profile, fixturesDir: new URL('../../fixtures/', import.meta.url) });
