/**
 * How records look on the wire. Kept apart from the stored records so that quirks (state typos)
 * only ever affect what is sent, never what tests read from `sandbox.dataset`.
 */
import { STATE_TYPOS, type DossierEtat, type SandboxDossier, type SandboxFacture } from './records.js';
import type { SandboxQuirks } from './types.js';

export function wireEtat(etat: DossierEtat, quirks: SandboxQuirks): string {
  return quirks.stateTypos ? (STATE_TYPOS[etat] ?? etat) : etat;
}

/** Dossier record of SPEC 2.1, as GET /v2/dossiers and /v1/dossiers/liste return it. */
export function dossierRecord(d: SandboxDossier, quirks: SandboxQuirks): Record<string, unknown> {
  return {
    status: 'success',
    engagement: d.engagement,
    etat: wireEtat(d.etat, quirks),
    numeroInterne: d.numeroInterne,
    numeroExterne: d.numeroExterne,
    numeroDeca: d.numeroDeca,
    dateModification: d.dateModification,
    cerfa: d.cerfa,
    echeances: d.echeances,
    detailsFacturation: d.detailsFacturation,
    engagementsFraisAnnexe: d.engagementsFraisAnnexe,
  };
}

/** Item of SPEC 2.2. */
export function etatItem(d: SandboxDossier, quirks: SandboxQuirks): Record<string, unknown> {
  return {
    numeroExterne: d.numeroExterne,
    numeroDeca: d.numeroDeca,
    numeroInterne: d.numeroInterne,
    etat: wireEtat(d.etat, quirks),
  };
}

/** Item of SPEC 2.4; the upstream has no typos on invoice states. */
export function factureItem(f: SandboxFacture): Record<string, unknown> {
  return {
    numeroInterneFacture: f.numeroInterneFacture,
    referenceFactureCFA: f.referenceFactureCFA,
    organismeFormation: { siret: f.organismeFormation.siret, IBAN: f.organismeFormation.IBAN },
    montantFacture: f.montantFacture,
    etatFacture: f.etatFacture,
    referenceVirement: f.referenceVirement,
    dateReglement: f.dateReglement,
    commentaire: f.commentaire,
    dossiers: f.dossiers.map((l) => ({ ...l })),
  };
}
