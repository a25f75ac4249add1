import t from 'tap';
import {
  CLASSIC_DOSSIER_ETATS,
  CLASSIC_FACTURE_ETATS,
  DOSSIER_ETATS,
  FACTURE_ETATS,
  IRREGULAR_NAMES,
  camelToSnake,
  frenchToIso,
  isDateField,
  isoToFrench,
  snakeToCamel,
} from '../src/server/index.js';

/** Every field name of the proxy's SPEC bodies and answers (schemas/json), as of this writing. */
const SPEC_NAMES = `EtatDossierResult IBAN XAPIKEY accompagnementDROM anneeDossier anneeFacture apprenti
attestationConservationPieces attestationConventionConformeJSON attestationConventionSignatureProbante
attestationConventionSigneeCFA attestationConventionSigneeEntreprise cerfa codification codificationEcheance comment
commentaire contrat count coutTotalPedagogieCFA couts dateDebut dateDebutContrat dateDebutFormation dateEmission dateFin
dateFinContrat dateFinFormation dateFinValidite dateModification dateNaissance dateReglement dateSignature denomination
detailsFacturation dossiers duree dureeFormation echeance echeancePartielle echeances employeur engagement
engagementsFraisAnnexe estCertificatRealisation etat etatFacture factures formation ibanEmetteur idObjet
intituleQualification lieuSignatureContrat lignes mandatEmployeur mentionMobiliteInternationale montant montantFacture
montantPremierEquipement montantRQTHAnnee1 montantRQTHAnnee2 montantRQTHAnnee3 montantRQTHAnnee4 montantTotal natureAction
natureLigne nom nomUsage nombreHebergementTotaux nombreRepasTotaux numero numeroDeca numeroDossier numeroEcheance
numeroExterne numeroExterneDossier numeroInterne numeroInterneDossier numeroInterneFacture numeroPage numerosInternes
numerosInternesIntrouvables objets organismeFormation page prenom qualite quantite referenceFactureCFA referenceVirement
representantLegal rncp siren siret siretEmetteur status total typeCertificat typeFichier typeObjet uaiCfa maitre1
dureeTravailHebdoHeures dureeTravailHebdoMinutes niveauPriseEnCharge montantEngage frequenceFacturation`.split(/\s+/);

t.test('camel → snake: the regular rule', async (t) => {
  const cases: Record<string, string> = {
    numeroInterne: 'numero_interne',
    IBAN: 'iban',
    referenceFactureCFA: 'reference_facture_cfa',
    montantRQTHAnnee1: 'montant_rqth_annee1',
    EtatDossierResult: 'etat_dossier_result',
    attestationConventionConformeJSON: 'attestation_convention_conforme_json',
    uaiCfa: 'uai_cfa',
    maitre1: 'maitre1',
    siret: 'siret',
    XAPIKEY: 'xapikey',
    dateNaissance: 'date_naissance',
  };
  for (const [camel, snake] of Object.entries(cases)) t.equal(camelToSnake(camel), snake, camel);
});

t.test('snake → camel: regular rule, and the irregular names', async (t) => {
  t.equal(snakeToCamel('numero_interne'), 'numeroInterne');
  t.equal(snakeToCamel('uai_cfa'), 'uaiCfa', 'regular: only the listed names keep an acronym');
  t.equal(snakeToCamel('reference_facture_cfa'), 'referenceFactureCFA');
  t.equal(snakeToCamel('iban'), 'IBAN');
  t.equal(snakeToCamel('montant_rqth_annee3'), 'montantRQTHAnnee3');
  t.equal(snakeToCamel('siret'), 'siret');
  t.equal(snakeToCamel('_files'), '_files', 'a leading underscore is kept');
  t.equal(snakeToCamel('est_rqth'), 'estRqth', 'a name not listed comes back by the regular rule');
  t.same(
    IRREGULAR_NAMES.filter((n) => snakeToCamel(camelToSnake(n)) !== n),
    [],
    'every irregular name comes back',
  );
});

t.test('every SPEC name survives camel → snake → camel, and snake names are lower case', async (t) => {
  for (const name of SPEC_NAMES) {
    const snake = camelToSnake(name);
    t.match(snake, /^[a-z0-9_]+$/, `${name} → ${snake}`);
    t.equal(snakeToCamel(snake), name, `${snake} → ${name}`);
  }
  t.equal(new Set(SPEC_NAMES.map(camelToSnake)).size, new Set(SPEC_NAMES).size, 'no two names collide');
});

t.test('any snake name survives snake → camel → snake', async (t) => {
  for (const snake of [
    'numero_interne',
    'uai_cfa',
    'est_rqth',
    'iban',
    'montant_rqth_annee2',
    'maitre1',
    'date_debut',
    'x',
  ]) {
    t.equal(camelToSnake(snakeToCamel(snake)), snake, snake);
  }
  // The one limit (README): one-letter words after the first run together as an acronym.
  t.equal(camelToSnake(snakeToCamel('a_b_c')), 'a_bc');
});

t.test('dates: which fields, and both directions', async (t) => {
  for (const name of ['date', 'dateNaissance', 'date_naissance', 'dateModification', 'date_fin_validite'])
    t.ok(isDateField(name), name);
  for (const name of ['dates', 'datex', 'mandatEmployeur', 'updateDate', 'etat']) t.notOk(isDateField(name), name);
  t.equal(isoToFrench('2025-06-30'), '30/06/2025');
  t.equal(isoToFrench('not a date'), 'not a date');
  t.equal(frenchToIso('30/06/2025'), '2025-06-30');
  t.equal(frenchToIso('29/02/2024'), '2024-02-29');
  for (const bad of ['2025-06-30', '31/02/2025', '1/6/2025', '30-06-2025', '30/06/25', ''])
    t.equal(frenchToIso(bad), undefined, `'${bad}' refused`);
});

t.test('state tables: every SPEC state, one-to-one', async (t) => {
  t.same(CLASSIC_DOSSIER_ETATS, {
    TRANSMIS: 'DEPOSE',
    EN_COURS_INSTRUCTION: 'EN_INSTRUCTION',
    ENGAGE: 'ACCEPTE',
    ANNULE: 'ANNULE',
    REFUSE: 'REJETE',
    RUPTURE: 'ROMPU',
    SOLDE: 'CLOTURE',
  });
  t.same(CLASSIC_FACTURE_ETATS, {
    TRANSMIS: 'RECUE',
    EN_COURS_REGLEMENT: 'EN_PAIEMENT',
    REGLE: 'PAYEE',
    BLOQUE: 'SUSPENDUE',
    REFUSE: 'REJETEE',
    ANNULE: 'ANNULEE',
    RELANCE: 'RELANCEE',
  });
  t.same(Object.keys(CLASSIC_DOSSIER_ETATS).sort(), [...DOSSIER_ETATS].sort());
  t.same(Object.keys(CLASSIC_FACTURE_ETATS).sort(), [...FACTURE_ETATS].sort());
  t.equal(new Set(Object.values(CLASSIC_DOSSIER_ETATS)).size, DOSSIER_ETATS.length);
  t.equal(new Set(Object.values(CLASSIC_FACTURE_ETATS)).size, FACTURE_ETATS.length);
});
