// The error table of SPEC 7 through classic-api, whose upstream says things its own way: an
// unknown dossier is a 400 "Dossier inconnu" (the service answers 404), errors are {erreur}, the
// token comes from HTTP Basic as {token, validity_seconds}, and certificats do not exist (501).
import t from 'tap';
import { CLASSIC, isErrorBody, startService } from '../src/index.js';

const service = await startService({
  opcoId: 'classic',
  opco: { adapter: 'classic-api', rateLimit: CLASSIC.rateLimit },
  sandbox: { shape: 'classic', dossierCount: 60, factureCount: 10 },
  config: { upstream: { timeoutMs: 500 } },
});
t.teardown(() => service.close());
const { sandbox } = service;
t.afterEach(() => sandbox.faults.clear());
const lastWire = () => sandbox.received.at(-1)!;

t.test('an unknown dossier: the upstream says 400 "Dossier inconnu", the client gets 404 NOT_FOUND', async (t) => {
  const byInterne = await service.get('/classic/dossiers?numeroInterne=DOS-1999-999999');
  isErrorBody(t, byInterne, 404, 'NOT_FOUND');
  t.match(byInterne.body.upstream, { erreur: /^Dossier inconnu/ }, 'the upstream body carried');
  t.equal(lastWire().path, '/api/v3/dossier');
  t.same(lastWire().query, { numero_interne: 'DOS-1999-999999' });
  const byExterne = await service.get('/classic/dossiers?numeroExterne=EXT-NOPE&numeroDeca=00000000000000');
  isErrorBody(t, byExterne, 404, 'NOT_FOUND');
  t.same(lastWire().query, { numero_externe: 'EXT-NOPE', numero_deca: '00000000000000' });
});

t.test('the rule is about that answer only: another 400 of the route stays UPSTREAM_ERROR 400', async (t) => {
  sandbox.faults.add({
    route: 'GET /api/v3/dossier',
    status: 400,
    body: { erreur: 'Paramètres invalides : numero_interne' },
    times: 1,
  });
  const reply = await service.get(`/classic/dossiers?numeroInterne=${sandbox.dataset.dossiers[0].numeroInterne}`);
  isErrorBody(t, reply, 400, 'UPSTREAM_ERROR');
  t.same(reply.body.upstream, { erreur: 'Paramètres invalides : numero_interne' });
});

t.test('more numbers than the upstream takes in a liste call: 400 VALIDATION_ERROR saying so', async (t) => {
  const numeros = Array.from({ length: 21 }, (_, i) => `DOS-2020-${String(i).padStart(6, '0')}`);
  const reply = await service.get(`/classic/dossiers/liste?numerosInternes=${numeros.join(',')}`);
  isErrorBody(t, reply, 400, 'VALIDATION_ERROR');
  t.match(reply.body.errors, [/at most 20/]);
  t.match(reply.body.upstream, { erreur: /20 numéros maximum/ });
  const twenty = await service.get(`/classic/dossiers/liste?numerosInternes=${numeros.slice(0, 20).join(',')}`);
  t.equal(twenty.status, 200, '20 is fine');
});

t.test('POST /certificats is not a route of this upstream: 501 NOT_SUPPORTED, nothing sent', async (t) => {
  sandbox.resetStats();
  const reply = await service.request('POST', '/classic/certificats', {
    body: {
      typeCertificat: 'Final',
      numeroInterneDossier: 'DOS-1',
      employeur: { siret: '1' },
      apprenti: { nom: 'A', prenom: 'B' },
      organismeFormation: { siret: '2' },
    },
  });
  isErrorBody(t, reply, 501, 'NOT_SUPPORTED');
  t.equal(sandbox.received.length, 0);
});

t.test('a key the upstream refuses: 403 HTTP_ERROR with its {erreur} body', async (t) => {
  const reply = await service.get('/classic/dossiers/etats', { key: 'forbidden-key-000' });
  isErrorBody(t, reply, 403, 'HTTP_ERROR');
  t.same(reply.body.upstream, { erreur: 'Clé API refusée' });
});

t.test('a key the upstream says is not valid for a SIREN: 200 status error, as SPEC 4.4 says', async (t) => {
  const reply = await service.get('/classic/cfakeyinfo?siren=123456789&XAPIKEY=forbidden-key-000');
  t.equal(reply.status, 200, reply.text);
  t.equal(reply.body.status, 'error');
  t.equal(reply.body.comment, 'Clé inconnue ou révoquée pour ce SIREN');
  t.notOk('dateFinValidite' in reply.body, 'no null date');
});

t.test('upstream 5xx, 429, silence, a cut connection and garbage map as for every upstream', async (t) => {
  sandbox.faults.add({ route: 'GET /api/v3/dossiers/etats', status: 503, times: 1 });
  const down = await service.get('/classic/dossiers/etats?numeroPage=1');
  isErrorBody(t, down, 503, 'UPSTREAM_ERROR');
  t.same(down.body.upstream, { erreur: 'Erreur injectée' });
  sandbox.faults.add({ route: 'GET /api/v3/dossiers/etats', status: 429, headers: { 'retry-after': '7' }, times: 1 });
  const limited = await service.get('/classic/dossiers/etats?numeroPage=2');
  isErrorBody(t, limited, 429, 'UPSTREAM_ERROR');
  t.equal(limited.headers.get('retry-after'), '7');
  sandbox.faults.add({ route: 'GET /api/v3/dossiers/etats', hang: true, times: 1 });
  isErrorBody(t, await service.get('/classic/dossiers/etats?numeroPage=3'), 504, 'TIMEOUT');
  sandbox.faults.add({ route: 'GET /api/v3/dossiers/etats', destroy: true, times: 1 });
  isErrorBody(t, await service.get('/classic/dossiers/etats?numeroPage=4'), 502, 'NETWORK_ERROR');
  sandbox.faults.add({ route: 'GET /api/v3/dossiers/etats', garbage: true, times: 1 });
  isErrorBody(t, await service.get('/classic/dossiers/etats?numeroPage=5'), 502, 'UPSTREAM_INVALID_RESPONSE');
  const numero = sandbox.dataset.dossiers[0].numeroInterne;
  sandbox.faults.add({
    route: 'GET /api/v3/dossier$',
    status: 200,
    body: { engagement: 1, etat: 'ACCEPTE' },
    times: 1,
  });
  isErrorBody(t, await service.get(`/classic/dossiers?numeroInterne=${numero}`), 502, 'UPSTREAM_INVALID_RESPONSE');
});

t.test('tokens: HTTP Basic, {token, validity_seconds}; a 401 refreshes once and retries once', async (t) => {
  await service.get('/classic/dossiers/etats?numeroPage=6');
  sandbox.resetStats();
  sandbox.revokeTokens();
  const replies = await Promise.all([7, 8, 9].map((n) => service.get(`/classic/dossiers/etats?numeroPage=${n}`)));
  t.same(
    replies.map((r) => r.status),
    [200, 200, 200],
  );
  t.equal(sandbox.stats.tokenRequests, 1, 'one refresh for three 401s');
  t.match(sandbox.stats.tokenRequestsLog, [{ style: 'basic', status: 200 }], 'asked for with HTTP Basic, and granted');
  sandbox.faults.add({
    route: 'GET /api/v3/dossiers/etats',
    status: 401,
    body: { erreur: 'Authentification requise' },
  });
  sandbox.resetStats();
  isErrorBody(t, await service.get('/classic/dossiers/etats?numeroPage=10'), 403, 'HTTP_ERROR');
  t.equal(sandbox.stats.calls['GET /api/v3/dossiers/etats'], 2, 'first call and exactly one retry');
});
