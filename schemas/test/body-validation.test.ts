/** SPEC 4.8 to 4.15: POST and PATCH bodies, with the spec's message format (`<path>: <message>`). */
import t from 'tap';
import {
  validate,
  schemaIds,
  type ConventionBody,
  type CertificatBody,
  type DocumentBody,
  type DossierBody,
  type FactureBody,
} from '../src/index.js';

const FILE = Buffer.from('%PDF-1.4 fake').toString('base64');

const dossier: DossierBody = {
  cerfa: {
    employeur: { siret: '12345678900011', denomination: 'ACME' },
    apprenti: { nom: 'Martin', prenom: 'Léa', dateNaissance: '2005-03-01' },
    contrat: { dateDebutContrat: '2024-09-01', dateFinContrat: '2026-08-31', dureeTravailHebdoHeures: 35 },
    formation: { rncp: 'RNCP1234' },
    organismeFormation: { siret: '98765432100022' },
  },
  _files: { cerfa: FILE },
};

const facture: FactureBody = {
  montantTotal: 1200.5,
  numero: 'F-2024-001',
  dateEmission: '2024-10-01',
  ibanEmetteur: 'FR7612345678901234567890123',
  siretEmetteur: '98765432100022',
  estCertificatRealisation: true,
  lignes: [{ montant: 1200.5, natureLigne: 'PEDAGOGIE', quantite: 1, numeroEcheance: 1, numeroDossier: 'D-1' }],
  _files: { facture: FILE },
};

const convention: ConventionBody = {
  numeroInterneDossier: 'D-1',
  employeur: { siret: '12345678900011' },
  apprenti: { nom: 'Martin', prenom: 'Léa', nomUsage: null },
  contrat: { dateDebutContrat: '2024-09-01', dateFinContrat: '2026-08-31' },
  organismeFormation: { siret: '98765432100022', uaiCfa: '0751234A' },
  formation: { dateDebutFormation: '2024-09-02', dateFinFormation: '2026-06-30', dureeFormation: 1200 },
  couts: { coutTotalPedagogieCFA: 14000, montantRQTHAnnee1: 0, mentionMobiliteInternationale: false },
  mandatEmployeur: true,
  dateSignature: '2024-08-20',
  attestationConventionSigneeEntreprise: true,
};

const certificat: CertificatBody = {
  typeCertificat: 'Intermediaire',
  numeroInterneDossier: 'D-1',
  numeroInterneFacture: 42,
  employeur: { siret: '12345678900011' },
  apprenti: { nom: 'Martin', prenom: 'Léa' },
  organismeFormation: { siret: '98765432100022' },
  representantLegal: { nom: 'Durand', prenom: 'Paul', qualite: 'Directeur' },
  echeance: {
    numero: 1,
    codification: 'E1',
    duree: 400,
    dateDebut: '2024-09-01',
    dateFin: '2025-02-28',
    echeancePartielle: false,
  },
};

const document: DocumentBody = {
  typeFichier: 'convention',
  objets: [{ typeObjet: 'dossier', idObjet: 'D-1' }],
  _files: { document: FILE },
};

const without = <T extends object>(value: T, ...keys: string[]) =>
  Object.fromEntries(Object.entries(value).filter(([k]) => !keys.includes(k)));
const errorsOf = (id: string, data: unknown): string[] => {
  const result = validate(id, data);
  return result.valid ? [] : result.errors;
};

t.test('valid examples are accepted', async (t) => {
  t.same(validate(schemaIds.dossierBody, dossier), { valid: true });
  t.same(validate(schemaIds.factureBody, facture), { valid: true });
  t.same(validate(schemaIds.conventionBody, convention), { valid: true });
  t.same(validate(schemaIds.certificatBody, certificat), { valid: true });
  t.same(
    validate(schemaIds.certificatBody, { ...certificat, numeroInterneFacture: 'FAC-1', typeCertificat: 'Final' }),
    { valid: true },
  );
  t.same(validate(schemaIds.documentBody, document), { valid: true });
  t.same(validate(schemaIds.syncBody, { opcoId: 'sandbox', minYear: 2020, enablePoller: true }), { valid: true });
  t.same(
    validate(schemaIds.webhookCreateBody, {
      callbackUrl: 'https://cfa.example/hooks',
      events: ['job.completed', 'sync.failed'],
      description: 'main',
    }),
    { valid: true },
  );
  t.same(validate(schemaIds.webhookUpdateBody, { active: false }), { valid: true });
});

t.test('4.8 dossier: nested required fields and dates', async (t) => {
  t.same(errorsOf(schemaIds.dossierBody, {}), ['cerfa: Required']);
  const cerfa = { ...dossier.cerfa, apprenti: { prenom: 'Léa' }, contrat: { dateDebutContrat: '01/09/2024' } };
  t.same(errorsOf(schemaIds.dossierBody, { cerfa: without(cerfa, 'employeur') }), [
    'cerfa.employeur: Required',
    'cerfa.apprenti.nom: Required',
    'cerfa.contrat.dateDebutContrat: Invalid date',
  ]);
  t.same(errorsOf(schemaIds.dossierBody, { cerfa: { ...dossier.cerfa, employeur: { siret: '' } } }), [
    'cerfa.employeur.siret: Must not be empty',
  ]);
  t.same(
    errorsOf(schemaIds.dossierBody, { cerfa: { ...dossier.cerfa, contrat: { dateDebutContrat: '2024-02-30' } } }),
    ['cerfa.contrat.dateDebutContrat: Invalid date'],
    'calendar dates are checked',
  );
});

t.test('4.9 facture: required fields, types, enum and minimum lines', async (t) => {
  t.same(errorsOf(schemaIds.factureBody, without(facture, 'numero', 'lignes')), [
    'numero: Required',
    'lignes: Required',
  ]);
  t.same(errorsOf(schemaIds.factureBody, { ...facture, montantTotal: '1200' }), ['montantTotal: Expected number']);
  t.same(errorsOf(schemaIds.factureBody, { ...facture, dateEmission: '01/10/2024' }), ['dateEmission: Invalid date']);
  t.same(errorsOf(schemaIds.factureBody, { ...facture, lignes: [] }), ['lignes: Must contain at least 1 item']);
  t.same(
    errorsOf(schemaIds.factureBody, {
      ...facture,
      lignes: [{ montant: 1, natureLigne: 'CANTINE', numeroDossier: 'D-1' }],
    }),
    [
      'lignes.0.natureLigne: Invalid enum value, expected one of PEDAGOGIE, MOBILITE, HEBERGEMENT, RESTAURATION, PREMIEREQUIPEMENT, MAJORATION_RQTH',
    ],
  );
  t.same(errorsOf(schemaIds.factureBody, { ...facture, lignes: [facture.lignes[0], { natureLigne: 'MOBILITE' }] }), [
    'lignes.1.montant: Required',
    'lignes.1.numeroDossier: Required',
  ]);
});

t.test('4.11 convention: required nested fields and dates', async (t) => {
  const broken = {
    ...without(convention, 'couts'),
    contrat: { dateDebutContrat: '2024-09-01' },
    formation: { ...convention.formation, dateFinFormation: 'soon', dureeFormation: '1200h' },
    apprenti: { nom: 'Martin', prenom: 'Léa', nomUsage: 3 },
  };
  t.same(errorsOf(schemaIds.conventionBody, broken), [
    'couts: Required',
    'apprenti.nomUsage: Expected string or null',
    'contrat.dateFinContrat: Required',
    'formation.dateFinFormation: Invalid date',
    'formation.dureeFormation: Expected number',
  ]);
  t.same(errorsOf(schemaIds.conventionBody, { ...convention, couts: {} }), ['couts.coutTotalPedagogieCFA: Required']);
});

t.test('4.12 certificat: typeCertificat enum and echeance.numero', async (t) => {
  t.same(errorsOf(schemaIds.certificatBody, { ...certificat, typeCertificat: 'final' }), [
    'typeCertificat: Invalid enum value, expected one of Intermediaire, Final',
  ]);
  t.same(errorsOf(schemaIds.certificatBody, without(certificat, 'typeCertificat', 'apprenti')), [
    'typeCertificat: Required',
    'apprenti: Required',
  ]);
  t.same(errorsOf(schemaIds.certificatBody, { ...certificat, echeance: { duree: 10 } }), ['echeance.numero: Required']);
  t.same(errorsOf(schemaIds.certificatBody, { ...certificat, numeroInterneFacture: true }), [
    'numeroInterneFacture: Expected string or number',
  ]);
});

t.test('4.12b document: typeFichier and at least one objet', async (t) => {
  t.same(errorsOf(schemaIds.documentBody, { objets: [] }), [
    'typeFichier: Required',
    'objets: Must contain at least 1 item',
  ]);
  t.same(errorsOf(schemaIds.documentBody, { typeFichier: 'cerfa', objets: [{ typeObjet: 'dossier' }] }), [
    'objets.0.idObjet: Required',
  ]);
});

t.test('_files: base64 values keyed by a plain role name (D7)', async (t) => {
  t.same(errorsOf(schemaIds.documentBody, { ...document, _files: { document: 'not base64!' } }), [
    '_files.document: Invalid base64',
  ]);
  t.same(
    errorsOf(schemaIds.documentBody, { ...document, _files: { document: 'abcde' } }),
    ['_files.document: Invalid base64'],
    'impossible length',
  );
  t.same(
    errorsOf(schemaIds.documentBody, { ...document, _files: { document: 'abc' } }),
    [],
    'unpadded base64 is accepted',
  );
  t.same(errorsOf(schemaIds.documentBody, { ...document, _files: { document: 42 } }), [
    '_files.document: Expected string',
  ]);
  t.same(errorsOf(schemaIds.documentBody, { ...document, _files: { '../x': FILE } }), [
    '_files.../x: Unknown file role, expected one of cerfa, facture, convention, certificat, document',
  ]);
  const big = Buffer.alloc(10 * 1024 * 1024, 1).toString('base64');
  t.same(
    errorsOf(schemaIds.documentBody, { ...document, _files: { document: big } }),
    [],
    'a 10 MiB file does not overflow the regex engine',
  );
});

t.test('POST /sync/dossiers: opcoId required, minYear an integer from 2018 (D19)', async (t) => {
  t.same(errorsOf(schemaIds.syncBody, { opcoId: 'sandbox', minYear: 2018 }), []);
  t.same(errorsOf(schemaIds.syncBody, { opcoId: 'sandbox', minYear: 2017 }), [
    'minYear: Must be greater than or equal to 2018',
  ]);
  t.same(errorsOf(schemaIds.syncBody, { opcoId: 'sandbox', minYear: 2018.5 }), ['minYear: Expected integer']);
  t.same(errorsOf(schemaIds.syncBody, { minYear: '2020', enablePoller: 'yes' }), [
    'opcoId: Required',
    'minYear: Expected integer',
    'enablePoller: Expected boolean',
  ]);
  t.same(
    errorsOf(schemaIds.syncBody, { opcoId: 'sandbox', minyear: 2020 }),
    ['minyear: Unrecognized field'],
    'typos are not silently ignored',
  );
});

t.test('webhook bodies: events of SPEC 6.1 and D22, at least one change on PATCH', async (t) => {
  t.same(errorsOf(schemaIds.webhookCreateBody, {}), ['callbackUrl: Required', 'events: Required']);
  t.same(errorsOf(schemaIds.webhookCreateBody, { callbackUrl: 'https://cfa.example/h', events: [] }), [
    'events: Must contain at least 1 item',
  ]);
  t.same(errorsOf(schemaIds.webhookCreateBody, { callbackUrl: 'https://cfa.example/h', events: ['job.done'] }), [
    'events.0: Invalid enum value, expected one of dossier.etat_changed, dossier.updated, facture.etat_changed, job.completed, job.failed, job.progress, sync.started, sync.batch, sync.completed, sync.failed, sync.cancelled, webhook.test, webhook.disabled',
  ]);
  t.same(errorsOf(schemaIds.webhookCreateBody, { callbackUrl: 'ftp://cfa.example/h', events: ['job.failed'] }), [
    'callbackUrl: Must be an http(s) URL',
  ]);
  t.same(errorsOf(schemaIds.webhookCreateBody, { callbackUrl: 'not a url', events: ['job.failed'] }), [
    'callbackUrl: Invalid url',
    'callbackUrl: Must be an http(s) URL',
  ]);
  t.same(errorsOf(schemaIds.webhookUpdateBody, {}), [
    'body: Must contain at least one of callbackUrl, events, active, description',
  ]);
  t.same(errorsOf(schemaIds.webhookUpdateBody, { active: 'no' }), ['active: Expected boolean']);
  t.same(errorsOf(schemaIds.webhookUpdateBody, { secret: 'x' }), ['secret: Unrecognized field']);
});

t.test('an unknown schema id is a programming error', async (t) => {
  t.throws(() => validate('no-such-schema', {}), /unknown schema id "no-such-schema"/);
});

t.test('D31: body dates take YYYY-MM-DD or a full ISO 8601 timestamp, nothing else', async (t) => {
  const withStart = (dateDebutContrat: string) =>
    errorsOf(schemaIds.dossierBody, { cerfa: { ...dossier.cerfa, contrat: { dateDebutContrat } } });
  for (const good of [
    '2025-09-01',
    '2025-09-01T12:00:00.000Z',
    '2025-09-01T00:00:00+02:00',
    '2025-09-01T00:00:00-0500',
    '2025-09-01T08:30',
    '2024-02-29T23:59:59.123456Z',
  ]) {
    t.same(withStart(good), [], good);
  }
  for (const bad of [
    '2025-02-30',
    '2025-02-30T00:00:00Z',
    '01/09/2025',
    '2025-9-1',
    '2025-09-01T25:00:00Z',
    '2025-09-01 12:00',
    '2025-09-01T12:00:00.000Zjunk',
    '',
  ]) {
    t.same(withStart(bad), ['cerfa.contrat.dateDebutContrat: Invalid date'], JSON.stringify(bad));
  }
  t.same(
    errorsOf(schemaIds.factureBody, { ...facture, dateEmission: '2024-10-01T00:00:00Z' }),
    [],
    'facture dateEmission',
  );
});
