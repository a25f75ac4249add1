/**
 * Records the sandbox's answers, in either shape, as the fixtures of the adapter kit
 * (`@opco-proxy/adapter-kit`): what an integrator does against a real upstream with curl, done
 * here for the bundled adapters (common-api over the common shape, classic-api over the classic
 * one). Quirks stay on, as the real upstream has them; error answers carry the service's answer
 * the adapter promises (`expect`). The upstream request schemas are written by hand, not here.
 *
 *     node adapters/sandbox/scripts/record-fixtures.mjs classic adapters/classic-api/fixtures
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { startSandbox } from './server/sandbox-server.js';
import type { Sandbox, SandboxShape } from './server/types.js';

interface Exchange {
  route: string;
  file: string;
  description: string;
  method?: 'GET' | 'POST';
  path: string;
  query?: Record<string, string>;
  json?: unknown;
  /** Multipart: the metadata part's name and content. */
  part?: [string, unknown];
  apiKey?: string;
  /** Armed before the call, for answers a healthy sandbox never gives (maintenance, a refusal). */
  fault?: { status: number; body: unknown };
  expect?: { status: number; code: string };
}

const fr = (iso: string) => `${iso.slice(8, 10)}/${iso.slice(5, 7)}/${iso.slice(0, 4)}`;
const API_KEY = 'cfa-recording-key-0001';
/** The number the sandbox gives the first dossier posted to it. */
const FIRST_CREATED = 'DOS-NEW-000001';

/**
 * A CERFA with every date a CFA may send, posted first so that reading it back records an answer
 * that has them all (the generated dossiers carry only the SPEC 2.1 ones).
 */
const FULL_CERFA = {
  employeur: { siret: '12345678901234', denomination: 'BOULANGERIE DU PORT' },
  apprenti: { nom: 'DUPONT', prenom: 'ÉLODIE', dateNaissance: '2006-04-02' },
  maitre1: { nom: 'DURAND', prenom: 'PAUL', dateNaissance: '1980-05-17' },
  maitre2: { nom: 'PETIT', prenom: 'ANNE', dateNaissance: '1975-11-30' },
  contrat: {
    dateConclusion: '2025-08-15',
    dateDebutContrat: '2025-09-01',
    dateFinContrat: '2027-08-31',
    dateDebutFormationPratique: '2025-09-02',
    dateEffetAvenant: '2026-01-01',
    dateRupture: '2026-12-31',
    dureeTravailHebdoHeures: '35',
  },
  formation: {
    rncp: 'RNCP35316',
    intituleQualification: 'CAP Boulanger',
    dateDebutFormation: '2025-09-01',
    dateFinFormation: '2027-06-30',
  },
  organismeFormation: { siret: '98765432109876', uaiCfa: '0441234A' },
};

/** The same CERFA on the classic wire: snake_case names, DD/MM/YYYY dates. */
function classicWire(value: unknown, name = ''): unknown {
  if (typeof value === 'string' && /^date/.test(name)) return fr(value);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, item]) => [
      key.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toLowerCase(),
      classicWire(item, key),
    ]),
  );
}

export async function recordFixtures(shape: SandboxShape, outDir: string): Promise<string[]> {
  const sandbox = await startSandbox({ shape, seed: 42, dossierCount: 24, factureCount: 12, pageSize: 10 });
  try {
    const written: string[] = [];
    const token = await askToken(sandbox, shape);
    written.push(
      save(outDir, 'auth', 'token.json', {
        description: 'client-credentials token answer',
        status: token.status,
        body: token.body,
      }),
    );
    const bearer = token.body.access_token ?? token.body.token;
    if (typeof bearer !== 'string')
      throw new Error(`the sandbox answered its token request ${token.status} without a token`);
    for (const exchange of shape === 'classic' ? classicExchanges(sandbox) : commonExchanges(sandbox)) {
      if (exchange.fault)
        sandbox.faults.add({
          route: `${exchange.method ?? 'GET'} ${exchange.path}$`,
          status: exchange.fault.status,
          body: exchange.fault.body,
          times: 1,
        });
      const answer = await call(sandbox, exchange, bearer);
      written.push(
        save(outDir, exchange.route, exchange.file, {
          description: exchange.description,
          status: answer.status,
          body: answer.body,
          ...(exchange.expect ? { expect: exchange.expect } : {}),
        }),
      );
    }
    return written;
  } finally {
    await sandbox.close();
  }
}

/** The token answer: `access_token` (RFC 6749) or `token`, by upstream shape. */
type TokenAnswer = { access_token?: string; token?: string };

async function askToken(sandbox: Sandbox, shape: SandboxShape): Promise<{ status: number; body: TokenAnswer }> {
  const basic = `Basic ${Buffer.from('recorder:recorder-secret').toString('base64')}`;
  const init: RequestInit =
    shape === 'classic'
      ? {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: basic },
          body: 'grant_type=client_credentials',
        }
      : {
          method: 'POST',
          headers: { 'content-type': 'application/x-www-form-urlencoded' },
          body: 'grant_type=client_credentials&client_id=recorder&client_secret=recorder-secret',
        };
  const res = await fetch(sandbox.tokenUrl, init);
  return { status: res.status, body: (await res.json()) as TokenAnswer };
}

async function call(sandbox: Sandbox, exchange: Exchange, bearer: string): Promise<{ status: number; body: unknown }> {
  const url = new URL(sandbox.url + exchange.path);
  for (const [name, value] of Object.entries(exchange.query ?? {})) url.searchParams.set(name, value);
  const headers: Record<string, string> = {
    authorization: `Bearer ${bearer}`,
    'x-api-key': exchange.apiKey ?? API_KEY,
  };
  let body: string | FormData | undefined;
  if (exchange.json !== undefined) {
    headers['content-type'] = 'application/json';
    body = JSON.stringify(exchange.json);
  } else if (exchange.part) {
    const form = new FormData();
    form.append(exchange.part[0], new Blob([JSON.stringify(exchange.part[1])], { type: 'application/json' }));
    form.append('fichier', new Blob([Buffer.from('%PDF-1.4\n%%EOF\n')], { type: 'application/pdf' }), 'piece.pdf');
    body = form;
  }
  const res = await fetch(url, { method: exchange.method ?? 'GET', headers, body });
  return { status: res.status, body: await res.json() };
}

function save(outDir: string, route: string, file: string, fixture: Record<string, unknown>): string {
  mkdirSync(join(outDir, route), { recursive: true });
  const path = join(outDir, route, file);
  writeFileSync(path, `${JSON.stringify(fixture, null, 2)}\n`);
  return path;
}

/** Dossiers picked by state, so the recorded answers show the upstream's state words. */
function dossierIn(sandbox: Sandbox, etat: string) {
  return sandbox.dataset.dossiers.find((d) => d.etat === etat)!;
}

const MAINTENANCE = { status: 503, code: 'UPSTREAM_ERROR' };
const REFUSED = { status: 403, code: 'HTTP_ERROR' };

function commonExchanges(sandbox: Sandbox): Exchange[] {
  const rupture = dossierIn(sandbox, 'RUPTURE');
  const engage = dossierIn(sandbox, 'ENGAGE');
  const numero = rupture.numeroInterne;
  return [
    {
      route: 'post-dossiers',
      file: 'full-cerfa.json',
      description: 'a dossier with every CERFA date, created',
      method: 'POST',
      path: '/v1/dossiers',
      json: { numeroExterne: 'CFA-REC-0', cerfa: FULL_CERFA },
    },
    {
      route: 'get-dossiers',
      file: 'full-cerfa.json',
      description: 'that dossier read back: every CERFA date',
      path: '/v2/dossiers',
      query: { numeroInterne: FIRST_CREATED },
    },
    { route: 'get-status', file: 'up.json', description: 'GET /v1/status', path: '/v1/status' },
    {
      route: 'get-dossiers',
      file: 'by-numero-interne.json',
      description: 'a dossier in RUPTURE, written RUTPURE',
      path: '/v2/dossiers',
      query: { numeroInterne: numero },
    },
    {
      route: 'get-dossiers',
      file: 'by-numero-externe.json',
      description: 'an ENGAGE dossier, written Valide',
      path: '/v2/dossiers',
      query: { numeroExterne: engage.numeroExterne, numeroDeca: engage.numeroDeca },
    },
    {
      route: 'get-dossiers',
      file: 'unknown-dossier.json',
      description: 'no such dossier',
      path: '/v2/dossiers',
      query: { numeroInterne: 'DOS-1999-999999' },
      expect: { status: 404, code: 'NOT_FOUND' },
    },
    {
      route: 'get-dossiers',
      file: 'refused-key.json',
      description: 'the CFA key is refused',
      path: '/v2/dossiers',
      query: { numeroInterne: numero },
      apiKey: 'forbidden-key-000',
      expect: REFUSED,
    },
    {
      route: 'get-dossiers-etats',
      file: 'page-1.json',
      description: 'first page (10 a page)',
      path: '/v2/dossiers/etats',
      query: { numeroPage: '1' },
    },
    {
      route: 'get-dossiers-etats',
      file: 'bare-array.json',
      description: 'no numeroPage: every item as a bare array',
      path: '/v2/dossiers/etats',
      query: {},
    },
    {
      route: 'get-dossiers-etats',
      file: 'maintenance.json',
      description: 'the upstream is down for maintenance',
      path: '/v2/dossiers/etats',
      query: { numeroPage: '2' },
      fault: { status: 503, body: { status: 'error', message: 'maintenance en cours' } },
      expect: MAINTENANCE,
    },
    {
      route: 'get-dossiers-liste',
      file: 'three-numbers.json',
      description: 'two dossiers and an unknown number',
      path: '/v1/dossiers/liste',
      query: { numerosInternes: `${numero},${engage.numeroInterne},${FIRST_CREATED},DOS-1999-999999` },
    },
    {
      route: 'post-dossiers',
      file: 'created.json',
      description: 'a dossier created',
      method: 'POST',
      path: '/v1/dossiers',
      json: {
        cerfa: {
          numeroExterne: 'CFA-REC-1',
          apprenti: { nom: 'DURAND', prenom: 'LÉA', dateNaissance: '2006-04-02' },
          contrat: { dateDebutContrat: '2025-09-01' },
        },
      },
    },
    {
      route: 'post-factures',
      file: 'created.json',
      description: 'an invoice received',
      method: 'POST',
      path: '/v1/factures',
      part: [
        'facture',
        {
          numero: 'F-REC-1',
          montantTotal: 1000,
          dateEmission: '2025-10-15',
          ibanEmetteur: 'FR7630006000011234567890189',
          siretEmetteur: '98765432109876',
          lignes: [{ montant: 1000, natureLigne: 'PEDAGOGIE', numeroDossier: numero }],
        },
      ],
    },
    {
      route: 'post-factures',
      file: 'refused.json',
      description: 'an amount the upstream refuses',
      method: 'POST',
      path: '/v1/factures',
      part: ['facture', { numero: 'F-REC-2' }],
      fault: { status: 422, body: { status: 'error', message: 'montant incohérent' } },
      expect: { status: 422, code: 'UPSTREAM_ERROR' },
    },
    {
      route: 'post-conventions',
      file: 'created.json',
      description: 'a convention received',
      method: 'POST',
      path: '/v1/conventions',
      part: ['convention', { numeroInterneDossier: numero }],
    },
    {
      route: 'post-certificats',
      file: 'created.json',
      description: 'a certificate received',
      method: 'POST',
      path: '/v2/certificats',
      part: ['certificat', { typeCertificat: 'Final', numeroInterneDossier: numero }],
    },
    {
      route: 'post-documents',
      file: 'created.json',
      description: 'a document received',
      method: 'POST',
      path: '/v1/documents',
      part: ['infosFichier', { typeFichier: 'convention', objets: [{ typeObjet: 'dossier', idObjet: numero }] }],
    },
  ];
}

function classicExchanges(sandbox: Sandbox): Exchange[] {
  const rompu = dossierIn(sandbox, 'RUPTURE');
  const accepte = dossierIn(sandbox, 'ENGAGE');
  const numero = rompu.numeroInterne;
  const tooMany = Array.from({ length: 21 }, (_, i) => `DOS-2020-${String(i).padStart(6, '0')}`).join(',');
  return [
    {
      route: 'post-dossiers',
      file: 'full-cerfa.json',
      description: 'a dossier with every CERFA date, created',
      method: 'POST',
      path: '/api/v3/dossiers',
      json: classicWire({ numeroExterne: 'CFA-REC-0', cerfa: FULL_CERFA }),
    },
    {
      route: 'get-dossiers',
      file: 'full-cerfa.json',
      description: 'that dossier read back: every CERFA date, DD/MM/YYYY',
      path: '/api/v3/dossier',
      query: { numero_interne: FIRST_CREATED },
    },
    { route: 'get-status', file: 'ok.json', description: 'GET /api/v3/statut', path: '/api/v3/statut' },
    {
      route: 'get-cfakeyinfo',
      file: 'valid-key.json',
      description: 'a key valid for the SIREN',
      path: '/api/v3/cle-cfa',
      query: { siren: '123456789', cle: 'cfa-key-0001' },
    },
    {
      route: 'get-cfakeyinfo',
      file: 'revoked-key.json',
      description: 'a key unknown for the SIREN: statut invalide, no date',
      path: '/api/v3/cle-cfa',
      query: { siren: '123456789', cle: 'forbidden-key-000' },
    },
    {
      route: 'get-dossiers',
      file: 'by-numero-interne.json',
      description: 'a dossier in RUPTURE, written ROMPU',
      path: '/api/v3/dossier',
      query: { numero_interne: numero },
    },
    {
      route: 'get-dossiers',
      file: 'by-numero-externe.json',
      description: 'an ENGAGE dossier, written ACCEPTE',
      path: '/api/v3/dossier',
      query: { numero_externe: accepte.numeroExterne, numero_deca: accepte.numeroDeca },
    },
    {
      route: 'get-dossiers',
      file: 'unknown-dossier.json',
      description: 'no such dossier: this upstream answers 400',
      path: '/api/v3/dossier',
      query: { numero_interne: 'DOS-1999-999999' },
      expect: { status: 404, code: 'NOT_FOUND' },
    },
    {
      route: 'get-dossiers',
      file: 'refused-key.json',
      description: 'the CFA key is refused',
      path: '/api/v3/dossier',
      query: { numero_interne: numero },
      apiKey: 'forbidden-key-000',
      expect: REFUSED,
    },
    {
      route: 'get-dossiers-etats',
      file: 'page-0.json',
      description: 'first page, counted from 0 (10 a page)',
      path: '/api/v3/dossiers/etats',
      query: { page: '0' },
    },
    {
      route: 'get-dossiers-etats',
      file: 'bare-array.json',
      description: 'no page: every item as a bare array',
      path: '/api/v3/dossiers/etats',
      query: {},
    },
    {
      route: 'get-dossiers-etats',
      file: 'modified-since.json',
      description: 'modified since a date',
      path: '/api/v3/dossiers/etats',
      query: { date_modification: fr('2024-01-01'), page: '0' },
    },
    {
      route: 'get-dossiers-etats',
      file: 'maintenance.json',
      description: 'the upstream is down for maintenance',
      path: '/api/v3/dossiers/etats',
      query: { page: '1' },
      fault: { status: 503, body: { erreur: 'Service en maintenance' } },
      expect: MAINTENANCE,
    },
    {
      route: 'get-dossiers-liste',
      file: 'three-numbers.json',
      description: 'two dossiers and an unknown number',
      path: '/api/v3/dossiers',
      query: { numeros: `${numero},${accepte.numeroInterne},${FIRST_CREATED},DOS-1999-999999` },
    },
    {
      route: 'get-dossiers-liste',
      file: 'too-many-numbers.json',
      description: '21 numbers, one more than this upstream takes',
      path: '/api/v3/dossiers',
      query: { numeros: tooMany },
      expect: { status: 400, code: 'VALIDATION_ERROR' },
    },
    {
      route: 'get-factures-etats',
      file: 'page-0.json',
      description: 'first page of invoices',
      path: '/api/v3/factures/etats',
      query: { page: '0' },
    },
    {
      route: 'get-factures-etats',
      file: 'page-1.json',
      description: 'second page of invoices',
      path: '/api/v3/factures/etats',
      query: { page: '1' },
    },
    {
      route: 'post-dossiers',
      file: 'created.json',
      description: 'a dossier created',
      method: 'POST',
      path: '/api/v3/dossiers',
      json: {
        numero_externe: 'CFA-REC-1',
        cerfa: {
          apprenti: { nom: 'DURAND', prenom: 'Léa', date_naissance: '02/04/2006' },
          contrat: { date_debut_contrat: '01/09/2025' },
        },
      },
    },
    {
      route: 'post-dossiers',
      file: 'invalid-date.json',
      description: 'a date not written DD/MM/YYYY',
      method: 'POST',
      path: '/api/v3/dossiers',
      json: { cerfa: { apprenti: { date_naissance: '2006-04-02' } } },
      expect: { status: 400, code: 'UPSTREAM_ERROR' },
    },
    {
      route: 'post-factures',
      file: 'created.json',
      description: 'an invoice received',
      method: 'POST',
      path: '/api/v3/factures',
      part: [
        'metadata',
        {
          numero: 'F-REC-1',
          montant_total: 1000,
          date_emission: fr('2025-10-15'),
          iban_emetteur: 'FR7630006000011234567890189',
          siret_emetteur: '98765432109876',
          lignes: [{ montant: 1000, nature_ligne: 'PEDAGOGIE', numero_dossier: numero }],
        },
      ],
    },
    {
      route: 'post-conventions',
      file: 'created.json',
      description: 'a convention received',
      method: 'POST',
      path: '/api/v3/conventions',
      part: ['metadata', { numero_interne_dossier: numero }],
    },
    {
      route: 'post-documents',
      file: 'created.json',
      description: 'a document received',
      method: 'POST',
      path: '/api/v3/documents',
      part: ['metadata', { type_fichier: 'convention', objets: [{ type_objet: 'dossier', id_objet: numero }] }],
    },
  ];
}
