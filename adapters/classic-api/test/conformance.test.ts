// The adapter kit over classic-api and the answers recorded from the sandbox in the classic shape.
import t from 'tap';
import { conformance } from '@opco-proxy/adapter-kit';
import { profile } from '../src/index.js';

await conformance(t, { profile, fixturesDir: new URL('../../fixtures/', import.meta.url) });
