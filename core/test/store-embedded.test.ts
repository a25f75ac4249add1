import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import t from 'tap';
import { createEmbeddedStore } from '../src/store/embedded-store.js';
import { storeContract } from '../src/store/store-contract.js';

t.test('in memory', async (t) => {
  storeContract(t, () => createEmbeddedStore());
});

t.test('file-backed', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'opco-store-'));
  t.teardown(() => rm(dir, { recursive: true, force: true }));
  storeContract(t, () => createEmbeddedStore({ path: join(dir, 'nested', 'data') }));
});
