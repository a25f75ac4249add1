/**
 * The kit's own corpus of service requests, one or more per route: what CFA software sends the
 * service (valid by the service's schemas; D31 timestamps, nulls, numbers where the SPEC has
 * them). Each goes through the profile's request transforms and the upstream client to a local
 * server, and what arrives there must satisfy the upstream request schema the integrator
 * declares. A full CERFA is there so transforms of its less common fields meet a real value.
 */
import type { RouteKey } from '@opco-proxy/core';

export interface SampleRequest {
  /** Named in messages. */
  name: string;
  query?: Record<string, string>;
  body?: Record<string, unknown>;
}

/** A small PDF, sent as the file of upload routes. */
export const SAMPLE_PDF = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n');
const file = SAMPLE_PDF.toString('base64');

const minimalDossier = {
  cerfa: {
    employeur: { siret: '12345678901234' },
    apprenti: { nom: 'Dupont', prenom: 'Léa' },
    contrat: { dateDebutContrat: '2025-09-01' },
    formation: {},
    organismeFormation: { siret: '98765432109876' },
  },
};

const fullDossier = {
  cerfa: {
    numeroExterne: 'CFA-2025-0042',
    employeur: {
      siret: '12345678901234',
      denomination: '  Boulangerie du Port ',
      nom: ' martin',
      telephone: null,
      adresse: { codePostal: '44000', commune: 'Nantes' },
    },
    apprenti: {
      nom: ' dupont ',
      prenom: 'Élodie ',
      nomUsage: null,
      sexe: 'F',
      dateNaissance: '2006-04-02',
      nir: '2060444109123',
    },
    maitre1: { nom: 'Durand', prenom: 'Paul', dateNaissance: '1980-05-17T00:00:00.000Z' },
    maitre2: { nom: 'Petit', prenom: 'Anne', dateNaissance: '1975-11-30' },
    contrat: {
      typeContratApp: 11,
      dateConclusion: '2025-08-15',
      dateDebutContrat: '2025-09-01T00:00:00+02:00',
      dateFinContrat: '2027-08-31',
      dateDebutFormationPratique: '2025-09-02',
      dateEffetAvenant: null,
      dateRupture: null,
      dureeTravailHebdoHeures: 35,
      dureeTravailHebdoMinutes: 0,
      salaireEmbauche: 1100.5,
    },
    formation: {
      rncp: 'RNCP35316',
      intituleQualification: 'CAP Boulanger',
      dateDebutFormation: '2025-09-01',
      dateFinFormation: '2027-06-30',
      dureeFormation: 800,
    },
    organismeFormation: { siret: '98765432109876', uaiCfa: '0441234A' },
  },
  _files: { cerfa: file },
};

const facture = {
  montantTotal: 1250.5,
  numero: 'F2025-0042',
  dateEmission: '2025-10-15T09:30:00.000Z',
  ibanEmetteur: 'FR7630006000011234567890189',
  siretEmetteur: '98765432109876',
  estCertificatRealisation: false,
  lignes: [
    {
      montant: 1000,
      natureLigne: 'PEDAGOGIE',
      quantite: 1,
      numeroEcheance: 1,
      numeroDossier: 'DOS-2025-000001',
      numeroDeca: '03120250900001',
    },
    { montant: 250.5, natureLigne: 'HEBERGEMENT', quantite: 5, numeroDossier: 'DOS-2025-000001' },
  ],
  _files: { facture: file },
};

const convention = {
  numeroInterneDossier: 'DOS-2025-000001',
  employeur: { siret: '12345678901234' },
  apprenti: { nom: ' durand', prenom: 'paul ', nomUsage: null },
  contrat: { dateDebutContrat: '2025-09-01', dateFinContrat: '2027-08-31T00:00:00.000Z' },
  organismeFormation: { siret: '98765432109876', uaiCfa: '0441234A' },
  formation: {
    dateDebutFormation: '2025-09-02',
    dateFinFormation: '2027-06-30',
    dureeFormation: 800,
    rncp: 'RNCP35316',
    intituleQualification: 'CAP Boulanger',
  },
  couts: {
    coutTotalPedagogieCFA: 13000,
    montantRQTHAnnee1: 500,
    nombreRepasTotaux: 120,
    montantPremierEquipement: 300,
    mentionMobiliteInternationale: false,
    accompagnementDROM: false,
  },
  mandatEmployeur: true,
  dateSignature: '2025-08-20',
  attestationConventionSigneeEntreprise: true,
  attestationConventionSigneeCFA: true,
  attestationConventionSignatureProbante: true,
  attestationConventionConformeJSON: true,
  _files: { convention: file },
};

const certificat = {
  typeCertificat: 'Final',
  numeroInterneDossier: 'DOS-2025-000001',
  numeroInterneFacture: 'FAC-2027-000001',
  dateSignature: '2027-07-01',
  lieuSignatureContrat: 'Nantes',
  representantLegal: { nom: 'Petit', prenom: 'Marc', qualite: 'père' },
  attestationConservationPieces: true,
  employeur: { siret: '12345678901234' },
  apprenti: { nom: 'petit ', prenom: ' anne' },
  organismeFormation: { siret: '98765432109876' },
  echeance: {
    numero: 4,
    codification: 'E4',
    duree: 400,
    dateDebut: '2027-01-01T00:00:00.000Z',
    dateFin: '2027-06-30',
    echeancePartielle: false,
  },
  _files: { certificat: file },
};

const document = {
  typeFichier: 'convention',
  objets: [{ typeObjet: 'dossier', idObjet: 'DOS-2025-000001' }],
  _files: { convention: file },
};

export const SAMPLE_REQUESTS: Readonly<Record<RouteKey, readonly SampleRequest[]>> = {
  'GET /status': [{ name: 'status', query: {} }],
  'GET /cfakeyinfo': [{ name: 'key of a SIREN', query: { siren: '123456789', XAPIKEY: 'cfa-key-0001' } }],
  'GET /dossiers': [
    { name: 'by numeroInterne', query: { numeroInterne: 'DOS-2025-000001' } },
    {
      name: 'by numeroExterne and numeroDeca',
      query: { numeroExterne: 'CFA-2025-0042', numeroDeca: '03120250900001' },
    },
  ],
  'GET /dossiers/etats': [
    { name: 'no filter', query: {} },
    { name: 'a page of a year', query: { anneeDossier: '2025', numeroPage: '2' } },
    { name: 'modified since a date', query: { dateModification: '2025-06-01', numeroPage: '1' } },
  ],
  'GET /dossiers/liste': [
    { name: 'three numbers', query: { numerosInternes: 'DOS-2025-000001,DOS-2025-000002,DOS-2025-000003' } },
  ],
  'GET /factures/etats': [
    { name: 'no filter', query: {} },
    {
      name: 'every filter',
      query: {
        anneeFacture: '2025',
        numeroInterneDossier: 'DOS-2025-000001',
        numeroExterneDossier: 'CFA-2025-0042',
        referenceFactureCFA: 'F2025-0042',
        referenceVirement: 'VIR20251015',
        dateModification: '2025-06-01',
        numeroPage: '2',
      },
    },
  ],
  'POST /dossiers': [
    { name: 'minimal dossier', body: minimalDossier },
    { name: 'full CERFA', body: fullDossier },
  ],
  'POST /factures': [{ name: 'invoice of two lines', body: facture }],
  'POST /conventions': [{ name: 'full convention', body: convention }],
  'POST /certificats': [{ name: 'final certificate', body: certificat }],
  'POST /documents': [{ name: 'a convention document', body: document }],
};
