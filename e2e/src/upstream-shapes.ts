/**
 * The two upstream API families the sandbox plays, as the e2e suites see them: which opcoId and
 * adapter stand in front, where each route lands upstream, how queries and bodies look on the
 * wire. One suite (jobs, sync, pollers) runs against either, so both adapters meet the same
 * assertions. Wire bodies are read back with the sandbox's own vocabulary, never the adapter's.
 */
import type { Test } from 'tap';
import { frenchToIso, isDateField, snakeToCamel, type SandboxShape } from '@opco-proxy/adapter-sandbox';

export interface UpstreamShape {
  sandbox: SandboxShape;
  opcoId: string;
  adapter: string;
  versions: string[];
  /** Upstream paths of the profile's routes; `certificats` absent when the route is not supported. */
  paths: {
    status: string;
    dossier: string;
    etats: string;
    liste: string;
    factureEtats: string;
    cfakeyinfo: string;
    postDossier: string;
    factures: string;
    conventions: string;
    certificats?: string;
    documents: string;
  };
  /** Multipart part carrying the JSON metadata, per POST route. */
  parts: { factures: string; conventions: string; certificats?: string; documents: string };
  /** Wire names of the query parameters the service renames (or not). */
  query: { year: string; page: string; numeros: string; dateModification: string; cfaKey: string };
  /** How the token request carries the client credentials (the profile's auth). */
  tokenStyle: 'form' | 'basic' | 'json';
  /** The wire value of the service's page `n` (counted from 1). */
  page: (n: number) => string;
  /** The wire form of a `YYYY-MM-DD` date in a query. */
  date(iso: string): string;
  batchSize: number;
  /**
   * The budget the suites give the opco when the profile's is too small for them: a sync suite
   * makes some 80 calls, and classic-api allows 30 a minute (its waits are rate-limit.test.ts's
   * business, not the sync's).
   */
  rateLimit?: { limit: number; windowMs: number };
  /** POST answers carry a state (`etat`, `etatFacture`), to be shown in the SPEC's words. */
  answersStates: boolean;
  /** A wire body (JSON or metadata part) in the service's names and dates. */
  canonical(body: unknown): any;
  /** What the profile promises about the dossier it sends (`cerfa` in wire form). */
  checkDossierSent(t: Test, cerfa: any): void;
  /** What the profile promises about the convention it sends (metadata in wire form). */
  checkConventionSent(t: Test, convention: any): void;
}

export const COMMON: UpstreamShape = {
  sandbox: 'common',
  opcoId: 'sandbox',
  adapter: 'sandbox',
  versions: ['1.0', '1.1'],
  paths: {
    status: '/v1/status',
    dossier: '/v2/dossiers',
    etats: '/v2/dossiers/etats',
    liste: '/v1/dossiers/liste',
    factureEtats: '/v1/factures/etats',
    cfakeyinfo: '/v1/cfakeyinfo',
    postDossier: '/v1/dossiers',
    factures: '/v1/factures',
    conventions: '/v1/conventions',
    certificats: '/v2/certificats',
    documents: '/v1/documents',
  },
  parts: { factures: 'facture', conventions: 'convention', certificats: 'certificat', documents: 'infosFichier' },
  query: {
    year: 'anneeDossier',
    page: 'numeroPage',
    numeros: 'numerosInternes',
    dateModification: 'dateModification',
    cfaKey: 'XAPIKEY',
  },
  tokenStyle: 'form',
  page: (n) => String(n),
  date: (iso) => iso,
  batchSize: 50,
  answersStates: false,
  canonical: (body) => body,
  checkDossierSent(t, cerfa) {
    t.equal(cerfa.apprenti.nom, 'DUPONT', 'uppercased and trimmed');
    t.equal(cerfa.apprenti.prenom, 'LÉA');
    t.notOk('nomUsage' in cerfa.apprenti, 'null removed');
    t.equal(cerfa.employeur.denomination, 'BOULANGERIE MARTIN');
    t.equal(cerfa.contrat.dureeTravailHebdoHeures, '35', 'hebdo hours as a string');
    t.equal(cerfa.contrat.dureeTravailHebdoMinutes, '0');
    t.equal(cerfa.contrat.dateDebutContrat, '2024-09-01');
  },
  checkConventionSent(t, json) {
    t.equal(json.apprenti.nom, 'DURAND');
    t.equal(json.apprenti.prenom, 'PAUL');
    t.notOk('nomUsage' in json.apprenti, 'nulls removed');
  },
};

/** `2024-09-01` -> `01/09/2024`, written out here rather than taken from the code under test. */
const french = (iso: string) => `${iso.slice(8, 10)}/${iso.slice(5, 7)}/${iso.slice(0, 4)}`;

/** A classic wire body with the SPEC's names and ISO dates, by the sandbox's own rules. */
function fromClassicWire(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(fromClassicWire);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(value)) {
    out[snakeToCamel(name)] =
      isDateField(name) && typeof field === 'string' ? (frenchToIso(field) ?? field) : fromClassicWire(field);
  }
  return out;
}

export const CLASSIC: UpstreamShape = {
  sandbox: 'classic',
  opcoId: 'classic',
  adapter: 'classic-api',
  versions: ['3.0', '3.1'],
  paths: {
    status: '/api/v3/statut',
    dossier: '/api/v3/dossier',
    etats: '/api/v3/dossiers/etats',
    liste: '/api/v3/dossiers',
    factureEtats: '/api/v3/factures/etats',
    cfakeyinfo: '/api/v3/cle-cfa',
    postDossier: '/api/v3/dossiers',
    factures: '/api/v3/factures',
    conventions: '/api/v3/conventions',
    documents: '/api/v3/documents',
  },
  parts: { factures: 'metadata', conventions: 'metadata', documents: 'metadata' },
  query: { year: 'annee', page: 'page', numeros: 'numeros', dateModification: 'date_modification', cfaKey: 'cle' },
  tokenStyle: 'basic',
  page: (n) => String(n - 1),
  date: french,
  batchSize: 20,
  rateLimit: { limit: 600, windowMs: 60_000 },
  answersStates: true,
  canonical: fromClassicWire,
  checkDossierSent(t, cerfa) {
    t.equal(cerfa.contrat.date_debut_contrat, '01/09/2024', 'dates as DD/MM/YYYY');
    t.equal(cerfa.apprenti.date_naissance, '14/03/2005');
    t.equal(cerfa.formation.date_fin_formation, '30/06/2026');
    t.equal(cerfa.organisme_formation.siret, '98765432109876', 'names in snake_case');
    t.equal(cerfa.contrat.duree_travail_hebdo_heures, 35, 'values as sent');
    t.notOk(JSON.stringify(cerfa).match(/"[a-z0-9_]*[A-Z][A-Za-z0-9_]*":/), 'no camelCase name left');
  },
  checkConventionSent(t, json) {
    t.equal(json.numero_interne_dossier.length > 0, true, 'names in snake_case');
    t.equal(json.contrat.date_debut_contrat, '01/09/2024');
    t.equal(json.formation.date_fin_formation, '30/06/2026');
    t.equal(json.couts.cout_total_pedagogie_cfa, 13000);
    t.equal(json.attestation_convention_conforme_json, true, 'acronyms in snake_case');
  },
};
