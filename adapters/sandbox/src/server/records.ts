/**
 * Records as the sandbox stores them: canonical states, plus the few fields the upstream keeps
 * to itself (year, emission date) that drive its filters. The wire form is built in wire.ts.
 */

export const DOSSIER_ETATS = [
  'TRANSMIS',
  'EN_COURS_INSTRUCTION',
  'ENGAGE',
  'ANNULE',
  'REFUSE',
  'RUPTURE',
  'SOLDE',
] as const;
export type DossierEtat = (typeof DOSSIER_ETATS)[number];

export const FACTURE_ETATS = [
  'TRANSMIS',
  'EN_COURS_REGLEMENT',
  'REGLE',
  'BLOQUE',
  'REFUSE',
  'ANNULE',
  'RELANCE',
] as const;
export type FactureEtat = (typeof FACTURE_ETATS)[number];

/** The real upstream's misspellings (SPEC 4.16), written on the wire when quirks.stateTypos is on. */
export const STATE_TYPOS: Readonly<Partial<Record<DossierEtat, string>>> = {
  RUPTURE: 'RUTPURE',
  EN_COURS_INSTRUCTION: 'En cours',
  ENGAGE: 'Valide',
  REFUSE: 'Refuse',
};

export interface SandboxCerfa {
  employeur: { siret: string; denomination: string; [extra: string]: unknown };
  apprenti: { nom: string; prenom: string; dateNaissance: string; [extra: string]: unknown };
  contrat: { dateDebutContrat: string; dateFinContrat: string; [extra: string]: unknown };
  formation: { rncp: string; intituleQualification: string; [extra: string]: unknown };
  organismeFormation: { siret: string; [extra: string]: unknown };
  [extra: string]: unknown;
}

export interface Echeance {
  numeroEcheance: number;
  dateDebutEcheance: string;
  dateFinEcheance: string;
  montant: number;
}

export interface FraisAnnexe {
  type: 'HEBERGEMENT' | 'RESTAURATION' | 'PREMIER_EQUIPEMENT' | 'MOBILITE';
  montant: number;
}

export interface SandboxDossier {
  numeroInterne: string;
  numeroExterne: string;
  /** Empty for a dossier created through POST /v1/dossiers without one. */
  numeroDeca: string;
  /** What `anneeDossier` filters on: the year the contract starts. */
  anneeDossier: number;
  etat: DossierEtat;
  dateModification: string;
  engagement: number;
  /** Generated dossiers follow SandboxCerfa; posted ones keep the posted cerfa verbatim. */
  cerfa: SandboxCerfa;
  echeances: Echeance[];
  detailsFacturation: Record<string, unknown>;
  engagementsFraisAnnexe: FraisAnnexe[];
}

export interface FactureDossierLine {
  numeroInterneDossier: string;
  numeroExterneDossier: string;
  montant: number;
}

export interface SandboxFacture {
  numeroInterneFacture: string;
  referenceFactureCFA: string;
  /** What `anneeFacture` filters on: the year of dateEmission. */
  anneeFacture: number;
  dateEmission: string;
  dateModification: string;
  organismeFormation: { siret: string; IBAN: string };
  montantFacture: number;
  etatFacture: FactureEtat;
  /** null until the invoice is paid (REGLE), as the real upstream does. */
  referenceVirement: string | null;
  dateReglement: string | null;
  commentaire: string | null;
  dossiers: FactureDossierLine[];
}

/** A training centre; dossiers and invoices of one centre share its SIRET and IBAN. */
export interface Organisme {
  siret: string;
  IBAN: string;
  nom: string;
}
