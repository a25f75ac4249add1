/**
 * The classic shape's state words. The dataset keeps the SPEC's states (3.3, 3.4); these tables
 * translate them on the wire only. Both are one-to-one, so the inverse is exact.
 */
import type { DossierEtat, FactureEtat } from './records.js';

export const CLASSIC_DOSSIER_ETATS: Readonly<Record<DossierEtat, string>> = {
  TRANSMIS: 'DEPOSE',
  EN_COURS_INSTRUCTION: 'EN_INSTRUCTION',
  ENGAGE: 'ACCEPTE',
  ANNULE: 'ANNULE',
  REFUSE: 'REJETE',
  RUPTURE: 'ROMPU',
  SOLDE: 'CLOTURE',
};

export const CLASSIC_FACTURE_ETATS: Readonly<Record<FactureEtat, string>> = {
  TRANSMIS: 'RECUE',
  EN_COURS_REGLEMENT: 'EN_PAIEMENT',
  REGLE: 'PAYEE',
  BLOQUE: 'SUSPENDUE',
  REFUSE: 'REJETEE',
  ANNULE: 'ANNULEE',
  RELANCE: 'RELANCEE',
};
