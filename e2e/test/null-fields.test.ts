// Issue 37 point 4, "optional means null is fine": Java and .NET clients write an absent optional
// field as null. Against the real service run as a process (the CLI's serve) in front of the
// sandbox: bodies whose optional fields are null are accepted and their jobs complete, the
// upstream receives no null at all, a required field sent as null is a 400 that names it, and a
// webhook is created with `description: null`.
import t from 'tap';
import { startSandbox } from '@opco-proxy/adapter-sandbox';
import {
  KEY_A,
  PDF,
  TEST_MASTER_KEY,
  certificatBody,
  conventionBody,
  dossierBody,
  factureBody,
  runCli,
  send,
  stopCli,
  waitForJob,
  writeConfig,
} from '../src/index.js';

const sandbox = await startSandbox();
t.teardown(() => sandbox.close());
const file = writeConfig({
  mode: 'development',
  host: '127.0.0.1',
  port: 0,
  logLevel: 'warn',
  jobs: { backoffMs: [100, 200, 400] },
  opcos: {
    sandbox: {
      adapter: 'sandbox',
      baseUrl: sandbox.url,
      tokenUrl: sandbox.tokenUrl,
      clientId: 'nulls',
      clientSecretEnv: 'NULLS_SECRET',
    },
  },
});
const proc = runCli(['serve', '--config', file], { OPCO_PROXY_MASTER_KEY: TEST_MASTER_KEY, NULLS_SECRET: 's' });
t.teardown(() => stopCli(proc.child));
const url = await proc.url;
const service = {
  request: (method: string, path: string, options: { key?: string | null; body?: unknown } = {}) =>
    send(url, method, path, options),
};
const numero = sandbox.dataset.dossiers[0].numeroInterne;

/** Every path of `value` that holds null. */
function nullPaths(value: unknown, path = ''): string[] {
  if (value === null) return [path || '(root)'];
  if (typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, item]) => nullPaths(item, path ? `${path}.${key}` : key));
}

/** What the sandbox received on `path`, as JSON: the body, or the metadata part of a multipart request. */
function receivedJson(path: string, part?: string): unknown[] {
  return sandbox.received
    .filter((r) => r.method === 'POST' && r.path === path)
    .map((r) => (part ? JSON.parse(r.parts!.find((p) => p.name === part)!.content.toString('utf8')) : r.json));
}

// A key the upstream has answered before, as a CFA's would be.
t.equal((await service.request('GET', '/sandbox/dossiers/etats')).status, 200, 'the key is one the upstream knows');

const dossier = dossierBody();
Object.assign(dossier.cerfa.apprenti, { dateNaissance: null });
Object.assign(dossier.cerfa.contrat, { dateFinContrat: null });
dossier._files = null;

const cases: Array<{ route: string; body: Record<string, any>; upstream: string; part?: string }> = [
  { route: 'dossiers', upstream: '/v1/dossiers', body: dossier },
  {
    route: 'factures',
    upstream: '/v1/factures',
    part: 'facture',
    body: {
      ...factureBody(numero),
      estCertificatRealisation: null,
      _files: { facture: PDF.toString('base64') },
      lignes: [
        {
          montant: 1250.5,
          natureLigne: 'PEDAGOGIE',
          numeroDossier: numero,
          quantite: null,
          numeroEcheance: null,
          codificationEcheance: null,
          numeroDeca: null,
        },
      ],
    },
  },
  {
    route: 'conventions',
    upstream: '/v1/conventions',
    part: 'convention',
    body: (() => {
      const body: Record<string, any> = { ...conventionBody(numero), mandatEmployeur: null, dateSignature: null };
      body.couts = {
        ...body.couts,
        montantRQTHAnnee1: null,
        montantRQTHAnnee2: null,
        montantRQTHAnnee3: null,
        montantRQTHAnnee4: null,
        nombreRepasTotaux: null,
        accompagnementDROM: null,
      };
      body.formation = { ...body.formation, intituleQualification: null };
      return body;
    })(),
  },
  {
    route: 'certificats',
    upstream: '/v2/certificats',
    part: 'certificat',
    body: (() => {
      const body: Record<string, any> = {
        ...certificatBody(numero),
        numeroInterneFacture: null,
        dateSignature: null,
        representantLegal: null,
        natureAction: null,
      };
      body.apprenti = { nom: 'Dupont', prenom: 'Jean', nomUsage: null };
      body.echeance = { ...body.echeance, codification: null, dateDebut: null, dateFin: null, echeancePartielle: null };
      return body;
    })(),
  },
];

for (const { route, body, upstream, part } of cases) {
  t.test(`POST /${route} with optional fields null: 202, completed, and no null reaches the upstream`, async (t) => {
    t.ok(nullPaths(body).length >= 2, `the body sent holds nulls: ${nullPaths(body).join(', ')}`);
    const before = receivedJson(upstream, part).length;
    const reply = await service.request('POST', `/sandbox/${route}`, { body });
    t.equal(reply.status, 202, reply.text);
    const job = await waitForJob(service, reply.body.statusUrl);
    t.equal(job.status, 'completed', JSON.stringify(job.error));
    const sent = receivedJson(upstream, part).slice(before);
    t.equal(sent.length, 1, 'sent once');
    t.same(nullPaths(sent[0]), [], `no null in what ${upstream} received`);
  });
}

t.test('a required field sent as null is a 400 VALIDATION_ERROR naming it', async (t) => {
  const certificat = { ...certificatBody(numero), apprenti: { nom: null, prenom: 'Jean', nomUsage: null } };
  const reply = await service.request('POST', '/sandbox/certificats', { body: certificat });
  t.equal(reply.status, 400, reply.text);
  t.equal(reply.body.code, 'VALIDATION_ERROR');
  t.same(reply.body.errors, ['apprenti.nom: Expected string, received null']);
  const facture = factureBody(numero);
  facture.lignes = [{ montant: 10, natureLigne: null, numeroDossier: numero, quantite: null }];
  const refused = await service.request('POST', '/sandbox/factures', { body: facture });
  t.equal(refused.status, 400, refused.text);
  t.same(refused.body.errors, ['lignes.0.natureLigne: Expected string, received null']);
});

t.test('POST /webhooks with description null: 201, without a description', async (t) => {
  const reply = await service.request('POST', '/webhooks', {
    key: KEY_A,
    body: { callbackUrl: 'http://127.0.0.1:9/nulls', events: ['job.completed'], description: null },
  });
  t.equal(reply.status, 201, reply.text);
  t.notOk('description' in reply.body, 'absent, not null');
  const patched = await service.request('PATCH', `/webhooks/${reply.body.id}`, {
    body: { active: false, description: null, events: null },
  });
  t.equal(patched.status, 200, patched.text);
  t.match(patched.body, { active: false, events: ['job.completed'] }, 'a null in a PATCH changes nothing');
});
