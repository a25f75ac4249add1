// Seams (seams.ts): one provider per seam, a second one refused naming both, nothing changed
// once the kernel is ready.
import t from 'tap';
import { SeamRegistry, type AdmissionProvider } from '../src/application.js';

const budget = (name: string): AdmissionProvider => ({
  name,
  admit: async () => ({ headers: {}, release: () => undefined }),
});

t.test('one provider per seam; the second is refused naming both', async (t) => {
  const seams = new SeamRegistry();
  const first = budget('store-budget');
  seams.provide('admission', first, 'kernel');
  t.ok(seams.has('admission'));
  t.equal(seams.get('admission'), first);
  t.throws(() => seams.provide('admission', budget('hub'), 'plugin hub'), {
    code: 'OPCO_ERR_SEAM_TWO_PROVIDERS',
    message: 'admission has two providers: "store-budget" from kernel and "hub" from plugin hub; enable only one',
  });
  t.equal(seams.get('admission'), first, 'the first provider stays');
});

t.test('a seam nothing provides cannot be read', async (t) => {
  const seams = new SeamRegistry();
  t.notOk(seams.has('admission'));
  t.throws(() => seams.get('admission'), { code: 'OPCO_ERR_SEAM_UNPROVIDED', message: 'nothing provides admission' });
});

t.test('seams are fixed once the kernel is ready', async (t) => {
  const seams = new SeamRegistry();
  seams.freeze();
  t.throws(() => seams.provide('admission', budget('late'), 'plugin late'), {
    code: 'OPCO_ERR_SEAMS_FROZEN',
    message: 'plugin late cannot provide admission: seams are fixed once the kernel is ready',
  });
  t.notOk(seams.has('admission'));
});
