// Demo mode (D1) shows two OPCOs whose APIs differ in every way: `sandbox` (the common API) and
// `classic` (the classic API through classic-api), both answering in the SPEC's shape.
import t from 'tap';
import { runCli, send, stopCli } from '../src/index.js';

t.test('demo mode serves opcoIds sandbox and classic, each through its own adapter', async (t) => {
  const demo = runCli(['serve'], { PORT: '0' });
  t.teardown(() => stopCli(demo.child));
  const url = (await demo.url).replace('0.0.0.0', '127.0.0.1');
  const key = 'demo-key-123';
  for (const opcoId of ['sandbox', 'classic']) {
    const page = await send(url, 'GET', `/${opcoId}/dossiers/etats?numeroPage=1`, { key });
    t.equal(page.status, 200, `${opcoId}: ${page.text}`);
    t.equal(page.body.page, 1);
    t.ok(page.body.EtatDossierResult.length > 0);
    const numero = page.body.EtatDossierResult[0].numeroInterne;
    const dossier = await send(url, 'GET', `/${opcoId}/dossiers?numeroInterne=${numero}`, { key });
    t.equal(dossier.status, 200, `${opcoId}: ${dossier.text}`);
    t.match(dossier.body.cerfa.apprenti.dateNaissance, /^\d{4}-\d{2}-\d{2}$/);
  }
  const status = await send(url, 'GET', '/classic/status', { key });
  t.same(status.body.supportedVersions, ['3.0', '3.1'], 'the classic upstream answers');
  const missing = await send(url, 'GET', '/classic/dossiers?numeroInterne=DOS-1999-999999', { key });
  t.equal(missing.status, 404, 'its "Dossier inconnu" 400 is a 404');
  const certificat = await send(url, 'POST', '/classic/certificats', {
    key,
    body: {
      typeCertificat: 'Final',
      numeroInterneDossier: 'DOS-1',
      employeur: { siret: '1' },
      apprenti: { nom: 'A', prenom: 'B' },
      organismeFormation: { siret: '2' },
    },
  });
  t.equal(certificat.status, 501);
  t.equal(await stopCli(demo.child), 0, 'clean exit on SIGTERM');
});
