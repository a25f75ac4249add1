/**
 * Every GET route of SPEC 4.3-4.7 and 4.10 over HTTP against the sandbox, transforms included,
 * in front of either upstream shape: whatever the upstream's names, states, dates and paging,
 * the client gets the SPEC's.
 */
import type { Test } from 'tap';
import { startService, KEY_A } from './harness.js';
import { COMMON, type UpstreamShape } from './upstream-shapes.js';

export const DOSSIER_STATES = ['TRANSMIS', 'EN_COURS_INSTRUCTION', 'ENGAGE', 'ANNULE', 'REFUSE', 'RUPTURE', 'SOLDE'];
export const FACTURE_STATES = ['TRANSMIS', 'EN_COURS_REGLEMENT', 'REGLE', 'BLOQUE', 'REFUSE', 'ANNULE', 'RELANCE'];
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;

export async function readsSuite(t: Test, shape: UpstreamShape = COMMON): Promise<void> {
  const service = await startService({
    opcoId: shape.opcoId,
    opco: { adapter: shape.adapter, rateLimit: shape.rateLimit },
    sandbox: { shape: shape.sandbox, dossierCount: 240, factureCount: 60, pageSize: 50 },
  });
  t.teardown(() => service.close());
  const { sandbox } = service;
  const at = (path: string) => `/${shape.opcoId}/${path}`;
  const lastWire = () => sandbox.received.at(-1)!;

  t.test('GET /{opcoId}/status reports health, versions and uptime', async (t) => {
    const reply = await service.get(at('status'));
    t.equal(reply.status, 200);
    t.equal(reply.body.status, 'healthy');
    t.same(reply.body.supportedVersions, shape.versions, 'the versions the upstream reports');
    t.type(reply.body.uptime, 'number');
    t.equal(lastWire().path, shape.paths.status);
  });

  t.test('GET /{opcoId}/dossiers/etats answers a page in the SPEC states', async (t) => {
    const reply = await service.get(at('dossiers/etats?numeroPage=2'));
    t.equal(reply.status, 200, reply.text);
    t.equal(reply.body.status, 'success');
    t.equal(reply.body.page, 2);
    t.equal(reply.body.count, 50);
    t.equal(reply.body.EtatDossierResult.length, 50);
    t.equal(reply.body.total, 240);
    t.ok(
      reply.body.EtatDossierResult.every((item: { etat: string }) => DOSSIER_STATES.includes(item.etat)),
      'every state is a SPEC 3.3 state',
    );
    const first = reply.body.EtatDossierResult[0];
    t.same(
      first,
      {
        numeroExterne: first.numeroExterne,
        numeroDeca: first.numeroDeca,
        numeroInterne: first.numeroInterne,
        etat: first.etat,
      },
      'the SPEC 2.2 item',
    );
    t.equal(sandbox.dataset.dossiers[50].numeroInterne, first.numeroInterne, 'the second page of 50');
    t.equal(lastWire().path, shape.paths.etats);
    t.equal(lastWire().query[shape.query.page], shape.page(2));
  });

  t.test('a bare array from the upstream is wrapped into a page object', async (t) => {
    sandbox.quirks.bareArrays = true;
    const reply = await service.get(at('dossiers/etats?anneeDossier=2023'));
    t.equal(reply.status, 200, reply.text);
    t.equal(reply.body.status, 'success');
    t.equal(reply.body.page, 1);
    t.ok(Array.isArray(reply.body.EtatDossierResult));
    t.equal(reply.body.total, reply.body.EtatDossierResult.length);
    t.equal(reply.body.count, reply.body.EtatDossierResult.length);
    const expected = sandbox.dataset.dossiers.filter((d) => d.anneeDossier === 2023).length;
    t.ok(reply.body.total > 0 && reply.body.total === expected, 'every 2023 dossier, and only those');
    t.same(lastWire().query, { [shape.query.year]: '2023' });
  });

  t.test('dossier records and liste show every SPEC state, their dates as YYYY-MM-DD', async (t) => {
    const byState = new Map<string, string>();
    for (const d of sandbox.dataset.dossiers) byState.set(d.etat, d.numeroInterne);
    t.same([...byState.keys()].sort(), [...DOSSIER_STATES].sort(), 'the dataset holds every state');
    for (const [state, numero] of byState) {
      const reply = await service.get(at(`dossiers?numeroInterne=${numero}`));
      t.equal(reply.status, 200, reply.text);
      t.equal(reply.body.status, 'success');
      t.equal(reply.body.etat, state, `${numero} shows ${state}`);
      const stored = sandbox.dataset.dossier(numero)!;
      t.equal(reply.body.cerfa?.apprenti?.dateNaissance, stored.cerfa.apprenti.dateNaissance, 'birth date as stored');
      t.equal(reply.body.cerfa?.contrat?.dateDebutContrat, stored.cerfa.contrat.dateDebutContrat);
      t.equal(reply.body.dateModification, stored.dateModification);
      t.match(reply.body.echeances?.[0]?.dateDebutEcheance ?? '2000-01-01', ISO_DATE);
      t.ok(reply.body.cerfa.organismeFormation?.siret, 'cerfa in the SPEC names');
    }
    const numeros = [...byState.values()];
    const liste = await service.get(at(`dossiers/liste?numerosInternes=${numeros.join(',')},DOS-0000-NOPE`));
    t.equal(liste.status, 200, liste.text);
    t.equal(liste.body.status, 'success');
    t.equal(liste.body.dossiers.length, numeros.length);
    t.same(liste.body.numerosInternesIntrouvables, ['DOS-0000-NOPE']);
    t.same(liste.body.dossiers.map((d: { etat: string }) => d.etat).sort(), [...byState.keys()].sort());
    t.ok(liste.body.dossiers.every((d: { dateModification: string }) => ISO_DATE.test(d.dateModification)));
    t.equal(lastWire().path, shape.paths.liste);
    t.equal(lastWire().query[shape.query.numeros], `${numeros.join(',')},DOS-0000-NOPE`);
  });

  t.test('GET /{opcoId}/dossiers by numeroExterne and numeroDeca', async (t) => {
    const dossier = sandbox.dataset.dossiers[3];
    const reply = await service.get(
      at(`dossiers?numeroExterne=${dossier.numeroExterne}&numeroDeca=${dossier.numeroDeca}`),
    );
    t.equal(reply.status, 200, reply.text);
    t.equal(reply.body.numeroInterne, dossier.numeroInterne);
    t.equal(lastWire().path, shape.paths.dossier);
  });

  t.test('GET /{opcoId}/factures/etats answers an invoice page in the SPEC states', async (t) => {
    const reply = await service.get(at('factures/etats'));
    t.equal(reply.status, 200, reply.text);
    t.equal(reply.body.status, 'success');
    t.equal(reply.body.page, 1);
    t.equal(reply.body.total, 60);
    t.equal(reply.body.factures.length, 50);
    for (const item of reply.body.factures) {
      for (const field of [
        'numeroInterneFacture',
        'referenceFactureCFA',
        'organismeFormation',
        'montantFacture',
        'etatFacture',
        'dossiers',
      ])
        t.ok(field in item, field);
      t.ok(FACTURE_STATES.includes(item.etatFacture), `${item.etatFacture} is a SPEC 3.4 state`);
      t.ok(item.dateReglement === null || ISO_DATE.test(item.dateReglement), 'payment date as YYYY-MM-DD or null');
      t.match(item.organismeFormation.IBAN, /^FR76/);
    }
    t.same(
      new Set(reply.body.factures.map((f: { etatFacture: string }) => f.etatFacture)).size > 3,
      true,
      'several states seen',
    );
    const second = await service.get(at('factures/etats?numeroPage=2'));
    t.equal(second.body.page, 2);
    t.equal(second.body.factures.length, 10);
    t.equal(lastWire().path, shape.paths.factureEtats);
    t.equal(lastWire().query[shape.query.page], shape.page(2));
  });

  t.test('GET /{opcoId}/cfakeyinfo forwards siren and the key', async (t) => {
    const reply = await service.get(at('cfakeyinfo?siren=123456789&XAPIKEY=cfa-key-123'));
    t.equal(reply.status, 200, reply.text);
    t.equal(reply.body.status, 'success');
    t.match(reply.body.dateFinValidite, ISO_DATE);
    const wire = lastWire();
    t.equal(wire.path, shape.paths.cfakeyinfo);
    t.equal(wire.query.siren, '123456789');
    t.equal(wire.query[shape.query.cfaKey], 'cfa-key-123');
  });

  t.test('upstream calls carry bearer token, forwarded key and publisher headers', async (t) => {
    t.same(
      sandbox.stats.tokenRequestsLog.map((r) => r.style),
      [shape.tokenStyle],
      'one token, asked for the way this upstream wants',
    );
    sandbox.resetStats();
    const reply = await service.get(at('dossiers/etats?numeroPage=3'), { key: KEY_A });
    t.equal(reply.status, 200);
    const wire = lastWire();
    t.match(String(wire.headers.authorization), /^Bearer \S+$/);
    t.equal(wire.headers['x-api-key'], KEY_A);
    t.equal(wire.headers.editeur, 'opco-proxy');
    t.equal(wire.headers.logiciel, 'opco-proxy');
    t.equal(wire.headers.version, '0.1.0');
    t.equal(reply.headers.get('svc-api-version'), '1');
  });

  t.test('dateModification filters from that date, written as the upstream writes dates', async (t) => {
    const reply = await service.get(at('dossiers/etats?dateModification=2025-06-01&numeroPage=1'));
    t.equal(reply.status, 200, reply.text);
    const expected = sandbox.dataset.dossiers.filter((d) => d.dateModification >= '2025-06-01').length;
    t.equal(reply.body.total, expected);
    t.equal(lastWire().query[shape.query.dateModification], shape.date('2025-06-01'));
    const factures = await service.get(at('factures/etats?dateModification=2025-01-01&anneeFacture=2025'));
    t.equal(factures.status, 200, factures.text);
    t.equal(lastWire().query[shape.query.dateModification], shape.date('2025-01-01'));
  });
}
