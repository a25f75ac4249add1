import t from 'tap';
import { startSandbox } from '../src/server/index.js';
import { authHeaders, fetchToken, getJson, postForm } from './upstream-client.js';

const sandbox = await startSandbox({ dossierCount: 50, factureCount: 20, quirks: { stateTypos: false } });
t.teardown(() => sandbox.close());
const headers = authHeaders(await fetchToken(sandbox));
const pdf = Buffer.concat([Buffer.from('%PDF-1.7\n'), Buffer.from([0, 1, 2, 255, 254, 10])]);

t.test('POST /v1/factures: metadata part and file recorded, invoice created', async (t) => {
  sandbox.resetStats();
  const dossier = sandbox.dataset.dossiers[10];
  const meta = {
    montantTotal: 1234.5,
    numero: 'FCFA-TEST-1',
    dateEmission: '2026-03-15',
    ibanEmetteur: 'FR7630004000031234567890143',
    siretEmetteur: '13002526500013',
    lignes: [
      { montant: 1000, natureLigne: 'PEDAGOGIE', numeroDossier: dossier.numeroInterne },
      { montant: 234.5, natureLigne: 'RESTAURATION', numeroDossier: dossier.numeroInterne },
    ],
  };
  const form = new FormData();
  form.append('facture', JSON.stringify(meta));
  form.append('fichier', new Blob([pdf], { type: 'application/pdf' }), 'facture.pdf');
  const r = await postForm(sandbox, '/v1/factures', headers, form);
  t.equal(r.status, 201);
  t.same(r.body, { status: 'success', numeroInterneFacture: 'FAC-NEW-000001', comment: null });

  t.equal(sandbox.received.length, 1);
  const got = sandbox.received[0];
  t.equal(got.method, 'POST');
  t.equal(got.path, '/v1/factures');
  t.match(got.headers['content-type'], /^multipart\/form-data; boundary=/);
  t.equal(got.parts?.length, 2);
  t.equal(got.parts![0].name, 'facture');
  t.equal(got.parts![0].filename, undefined);
  t.same(JSON.parse(got.parts![0].content.toString('utf8')), meta);
  t.equal(got.parts![1].name, 'fichier');
  t.equal(got.parts![1].filename, 'facture.pdf');
  t.equal(got.parts![1].contentType, 'application/pdf');
  t.ok(got.parts![1].content.equals(pdf), 'binary content intact');
  t.equal(got.json, undefined);

  const listed = await getJson(sandbox, '/v1/factures/etats?referenceFactureCFA=FCFA-TEST-1', headers);
  t.equal(listed.body.total, 1);
  t.match(listed.body.factures[0], {
    numeroInterneFacture: 'FAC-NEW-000001',
    montantFacture: 1234.5,
    etatFacture: 'TRANSMIS',
    organismeFormation: { siret: '13002526500013', IBAN: 'FR7630004000031234567890143' },
  });
  t.same(listed.body.factures[0].dossiers, [
    { numeroInterneDossier: dossier.numeroInterne, numeroExterneDossier: dossier.numeroExterne, montant: 1234.5 },
  ]);
});

t.test('metadata may also come as a JSON file part', async (t) => {
  sandbox.resetStats();
  const form = new FormData();
  form.append(
    'certificat',
    new Blob([JSON.stringify({ typeCertificat: 'Final', numeroInterneDossier: 'DOS-2020-000001' })], {
      type: 'application/json',
    }),
    'certificat.json',
  );
  form.append('certificatRealisation', new Blob([pdf], { type: 'application/pdf' }), 'cr.pdf');
  const r = await postForm(sandbox, '/v2/certificats', headers, form);
  t.equal(r.status, 201);
  t.match(r.body, { status: 'success', numeroCertificat: /^CERT-NEW-\d{6}$/, comment: null });
  t.equal(sandbox.received[0].parts![0].contentType, 'application/json');
  t.equal(sandbox.received[0].parts![0].filename, 'certificat.json');
});

t.test('POST /v1/conventions and /v1/documents', async (t) => {
  const convention = new FormData();
  convention.append('convention', JSON.stringify({ numeroInterneDossier: 'DOS-2021-000050' }));
  convention.append('convention', new Blob([pdf], { type: 'application/pdf' }), 'convention.pdf');
  const c = await postForm(sandbox, '/v1/conventions', headers, convention);
  t.equal(c.status, 201);
  t.match(c.body, { status: 'success', numeroConvention: /^CONV-NEW-\d{6}$/, numeroInterneDossier: 'DOS-2021-000050' });

  const document = new FormData();
  document.append(
    'infosFichier',
    JSON.stringify({ typeFichier: 'CERFA', objets: [{ typeObjet: 'dossier', idObjet: 'DOS-NEW-000001' }] }),
  );
  document.append('fichier', new Blob([pdf], { type: 'application/pdf' }), 'cerfa.pdf');
  const d = await postForm(sandbox, '/v1/documents', headers, document);
  t.equal(d.status, 201);
  t.match(d.body, { status: 'success', idDocument: /^DOC-NEW-\d{6}$/ });
  t.not(d.body.idDocument.slice(-6), c.body.numeroConvention.slice(-6), 'references are not reused');
});

t.test('missing or unreadable metadata part gives 400', async (t) => {
  const wrongName = new FormData();
  wrongName.append('metadata', JSON.stringify({ numero: 'x' }));
  const r = await postForm(sandbox, '/v1/factures', headers, wrongName);
  t.equal(r.status, 400);
  t.same(r.body, { status: 'error', message: "partie 'facture' manquante" });

  const notJson = new FormData();
  notJson.append('infosFichier', 'typeFichier=CERFA');
  t.equal((await postForm(sandbox, '/v1/documents', headers, notJson)).status, 400);

  const asJson = await fetch(`${sandbox.url}/v1/conventions`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify({ convention: {} }),
  });
  t.equal(asJson.status, 400, 'JSON instead of multipart');
  t.equal(((await asJson.json()) as { message: string }).message, 'multipart/form-data attendu');

  const broken = await fetch(`${sandbox.url}/v1/factures`, {
    method: 'POST',
    headers: { ...headers, 'content-type': 'multipart/form-data' },
    body: 'no boundary',
  });
  t.equal(broken.status, 400, 'multipart without boundary');
});

t.test('multipart routes are behind the same gate', async (t) => {
  const form = new FormData();
  form.append('facture', JSON.stringify({ numero: 'x' }));
  const res = await fetch(`${sandbox.url}/v1/factures`, {
    method: 'POST',
    headers: { 'x-api-key': headers['x-api-key'] },
    body: form,
  });
  t.equal(res.status, 401);
  t.notOk(
    sandbox.dataset.factures.some((f) => f.referenceFactureCFA === 'x'),
    'nothing was created',
  );
});
