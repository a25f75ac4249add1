/**
 * The words of the classic API family that differ from the SPEC's: its state words, the field
 * names its snake_case cannot give back by the regular rule, and where dates sit in its records.
 * Data only: the profile (index.ts) applies them with the transforms of `@opco-proxy/core`.
 */

/** Classic dossier state -> SPEC 3.3. One-to-one, so nothing a client sees is ambiguous. */
export const DOSSIER_STATES: Readonly<Record<string, string>> = Object.freeze({
  DEPOSE: 'TRANSMIS',
  EN_INSTRUCTION: 'EN_COURS_INSTRUCTION',
  ACCEPTE: 'ENGAGE',
  ANNULE: 'ANNULE',
  REJETE: 'REFUSE',
  ROMPU: 'RUPTURE',
  CLOTURE: 'SOLDE',
});

/** Classic invoice state -> SPEC 3.4. */
export const FACTURE_STATES: Readonly<Record<string, string>> = Object.freeze({
  RECUE: 'TRANSMIS',
  EN_PAIEMENT: 'EN_COURS_REGLEMENT',
  PAYEE: 'REGLE',
  SUSPENDUE: 'BLOQUE',
  REJETEE: 'REFUSE',
  ANNULEE: 'ANNULE',
  RELANCEE: 'RELANCE',
});

/** The key check of `GET /cle-cfa` in the words of SPEC 4.4. */
export const KEY_STATUSES: Readonly<Record<string, string>> = Object.freeze({ valide: 'success', invalide: 'error' });

/**
 * SPEC names with an acronym: their snake_case form (`reference_facture_cfa`) would come back as
 * `referenceFactureCfa` by the regular rule, so they are restored from this list.
 */
export const IRREGULAR_NAMES: readonly string[] = Object.freeze([
  'IBAN',
  'XAPIKEY',
  'EtatDossierResult',
  'referenceFactureCFA',
  'coutTotalPedagogieCFA',
  'attestationConventionSigneeCFA',
  'attestationConventionConformeJSON',
  'accompagnementDROM',
  'montantRQTHAnnee1',
  'montantRQTHAnnee2',
  'montantRQTHAnnee3',
  'montantRQTHAnnee4',
]);

/** The dates of a CERFA a CFA sends and reads back: contract, training and birth dates. */
export const CERFA_DATES: readonly string[] = Object.freeze([
  'cerfa.contrat.dateConclusion',
  'cerfa.contrat.dateDebutContrat',
  'cerfa.contrat.dateFinContrat',
  'cerfa.contrat.dateEffetAvenant',
  'cerfa.contrat.dateDebutFormationPratique',
  'cerfa.contrat.dateRupture',
  'cerfa.formation.dateDebutFormation',
  'cerfa.formation.dateFinFormation',
  'cerfa.apprenti.dateNaissance',
  'cerfa.maitre1.dateNaissance',
  'cerfa.maitre2.dateNaissance',
]);

/** Every date of a dossier record as the upstream answers it (SPEC 2.1 plus its schedule). */
export const DOSSIER_RECORD_DATES: readonly string[] = Object.freeze([
  ...CERFA_DATES,
  'dateModification',
  'echeances.*.dateDebutEcheance',
  'echeances.*.dateFinEcheance',
]);

/** The same dates in each record of a list (`dossiers.*.…`). */
export function within(prefix: string, paths: readonly string[]): string[] {
  return paths.map((path) => `${prefix}.${path}`);
}
