// Every GET route of SPEC 4.3-4.7 and 4.10 over HTTP against the sandbox, transforms included.
import t from 'tap';
import { startService, KEY_A } from '../src/index.js';

const service = await startService({ sandbox: { dossierCount: 240, factureCount: 60, pageSize: 50 } });
t.teardown(() => service.close());
const { sandbox } = service;

t.test('GET /{opcoId}/status reports health, versions and uptime', async (t) => {
  const reply = await service.get('/sandbox/status');
  t.equal(reply.status, 200);
  t.equal(reply.body.status, 'healthy');
  t.same(reply.body.supportedVersions, ['1.0', '1.1']);
  t.type(reply.body.uptime, 'number');
});

t.test('GET /{opcoId}/dossiers/etats answers a page with corrected states', async (t) => {
  sandbox.quirks.stateTypos = true;
  const reply = await service.get('/sandbox/dossiers/etats?numeroPage=2');
  t.equal(reply.status, 200, reply.text);
  t.equal(reply.body.status, 'success');
  t.equal(reply.body.page, 2);
  t.equal(reply.body.EtatDossierResult.length, 50);
  t.equal(reply.body.total, 240);
  const states = new Set(reply.body.EtatDossierResult.map((item: { etat: string }) => item.etat));
  for (const typo of ['RUTPURE', 'En cours', 'Valide', 'Refuse']) t.notOk(states.has(typo), `no ${typo} left`);
  const wire = sandbox.received.at(-1)!;
  t.equal(wire.path, '/v2/dossiers/etats');
  t.equal(wire.query.numeroPage, '2');
});

t.test('a bare array from the upstream is wrapped into a page object', async (t) => {
  sandbox.quirks.bareArrays = true;
  const reply = await service.get('/sandbox/dossiers/etats?anneeDossier=2023');
  t.equal(reply.status, 200, reply.text);
  t.equal(reply.body.status, 'success');
  t.equal(reply.body.page, 1);
  t.ok(Array.isArray(reply.body.EtatDossierResult));
  t.equal(reply.body.total, reply.body.EtatDossierResult.length);
  t.equal(reply.body.count, reply.body.EtatDossierResult.length);
  const expected = sandbox.dataset.dossiers.filter((d: { anneeDossier?: number; numeroInterne: string }) => d.numeroInterne.includes('2023')).length;
  t.ok(reply.body.total > 0 && reply.body.total <= expected, 'only 2023 dossiers');
});

t.test('the four state typos are corrected in dossier records and liste', async (t) => {
  sandbox.quirks.stateTypos = true;
  const byState = new Map<string, string>();
  for (const d of sandbox.dataset.dossiers as Array<{ numeroInterne: string; etat: string }>) byState.set(d.etat, d.numeroInterne);
  for (const state of ['RUPTURE', 'EN_COURS_INSTRUCTION', 'ENGAGE', 'REFUSE']) {
    const numero = byState.get(state)!;
    const reply = await service.get(`/sandbox/dossiers?numeroInterne=${numero}`);
    t.equal(reply.status, 200, reply.text);
    t.equal(reply.body.etat, state, `${numero} shows ${state}`);
    t.ok(reply.body.cerfa?.apprenti?.nom, 'cerfa present');
  }
  const numeros = [...byState.values()];
  const liste = await service.get(`/sandbox/dossiers/liste?numerosInternes=${numeros.join(',')},DOS-0000-NOPE`);
  t.equal(liste.status, 200, liste.text);
  t.equal(liste.body.dossiers.length, numeros.length);
  t.same(liste.body.numerosInternesIntrouvables, ['DOS-0000-NOPE']);
  const shown = new Set(liste.body.dossiers.map((d: { etat: string }) => d.etat));
  for (const typo of ['RUTPURE', 'En cours', 'Valide', 'Refuse']) t.notOk(shown.has(typo));
});

t.test('GET /{opcoId}/dossiers by numeroExterne and numeroDeca', async (t) => {
  const dossier = sandbox.dataset.dossiers[3] as { numeroInterne: string; numeroExterne: string; numeroDeca: string };
  const reply = await service.get(`/sandbox/dossiers?numeroExterne=${dossier.numeroExterne}&numeroDeca=${dossier.numeroDeca}`);
  t.equal(reply.status, 200, reply.text);
  t.equal(reply.body.numeroInterne, dossier.numeroInterne);
});

t.test('GET /{opcoId}/factures/etats answers an invoice page', async (t) => {
  const reply = await service.get('/sandbox/factures/etats');
  t.equal(reply.status, 200, reply.text);
  t.equal(reply.body.status, 'success');
  t.ok(reply.body.factures.length > 0);
  const item = reply.body.factures[0];
  for (const field of ['numeroInterneFacture', 'referenceFactureCFA', 'organismeFormation', 'montantFacture', 'etatFacture', 'dossiers']) t.ok(field in item, field);
});

t.test('GET /{opcoId}/cfakeyinfo forwards siren and XAPIKEY', async (t) => {
  const reply = await service.get('/sandbox/cfakeyinfo?siren=123456789&XAPIKEY=cfa-key-123');
  t.equal(reply.status, 200, reply.text);
  t.equal(reply.body.status, 'success');
  t.match(reply.body.dateFinValidite, /^\d{4}-\d{2}-\d{2}$/);
  const wire = sandbox.received.at(-1)!;
  t.equal(wire.query.siren, '123456789');
  t.equal(wire.query.XAPIKEY, 'cfa-key-123');
});

t.test('upstream calls carry bearer token, forwarded key and publisher headers', async (t) => {
  sandbox.resetStats();
  const reply = await service.get('/sandbox/dossiers/etats?numeroPage=3', { key: KEY_A });
  t.equal(reply.status, 200);
  const wire = sandbox.received.at(-1)!;
  t.match(String(wire.headers.authorization), /^Bearer \S+$/);
  t.equal(wire.headers['x-api-key'], KEY_A);
  t.equal(wire.headers.editeur, 'opco-proxy');
  t.equal(wire.headers.logiciel, 'opco-proxy');
  t.equal(wire.headers.version, '0.1.0');
  t.equal(reply.headers.get('svc-api-version'), '1');
});
