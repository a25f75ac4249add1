/**
 * Deterministic generation of the sandbox's dossiers and invoices. Everything is derived from
 * the seed and nothing from the clock, so the same options give the same data on any day.
 */
import { FORMATIONS, NOMS, PRENOMS, addDays, cfaName, daysBetween, denomination, iban, siret } from './identities.js';
import { Random } from './prng.js';
import {
  DOSSIER_ETATS,
  FACTURE_ETATS,
  type DossierEtat,
  type Echeance,
  type FactureEtat,
  type FraisAnnexe,
  type Organisme,
  type SandboxDossier,
  type SandboxFacture,
} from './records.js';

export const FIRST_YEAR = 2019;
export const LAST_YEAR = 2025;
/** Latest modification date of generated data; fixed so the data does not depend on today. */
export const DATA_HORIZON = `${LAST_YEAR}-12-31`;
const ORGANISME_COUNT = 4;
const DEPARTEMENTS = ['069', '044', '035', '059', '033', '031', '038', '021', '037', '049'];

/** Older dossiers have mostly reached an end state; recent ones are mostly still moving. */
function dossierWeights(age: number): Record<DossierEtat, number> {
  if (age === 0) {
    return { TRANSMIS: 20, EN_COURS_INSTRUCTION: 25, ENGAGE: 40, ANNULE: 4, REFUSE: 4, RUPTURE: 5, SOLDE: 2 };
  }
  if (age <= 2) {
    return { TRANSMIS: 2, EN_COURS_INSTRUCTION: 5, ENGAGE: 50, ANNULE: 5, REFUSE: 5, RUPTURE: 13, SOLDE: 20 };
  }
  return { TRANSMIS: 0, EN_COURS_INSTRUCTION: 1, ENGAGE: 10, ANNULE: 8, REFUSE: 6, RUPTURE: 20, SOLDE: 55 };
}

const FACTURE_WEIGHTS: Record<FactureEtat, number> = {
  TRANSMIS: 12,
  EN_COURS_REGLEMENT: 15,
  REGLE: 50,
  BLOQUE: 6,
  REFUSE: 5,
  ANNULE: 4,
  RELANCE: 8,
};

export const FACTURE_COMMENTS: Partial<Record<FactureEtat, readonly string[]>> = {
  BLOQUE: ['RIB non conforme', 'Pièce justificative manquante', 'Certificat de réalisation absent'],
  REFUSE: ['Montant supérieur à l’engagement', 'Échéance déjà facturée'],
  RELANCE: ['Relance : certificat de réalisation attendu', 'Relance : facture illisible'],
};

const pad = (n: number, width: number) => String(n).padStart(width, '0');
const cents = (n: number) => Math.round(n * 100) / 100;

export interface GeneratedData {
  organismes: Organisme[];
  dossiers: SandboxDossier[];
  factures: SandboxFacture[];
}

export function generateData(seed: number, dossierCount: number, factureCount: number): GeneratedData {
  const random = new Random(seed);
  const organismes: Organisme[] = [];
  for (let i = 0; i < ORGANISME_COUNT; i++) {
    organismes.push({ siret: siret(random), IBAN: iban(random), nom: cfaName(random) });
  }
  const dossiers: SandboxDossier[] = [];
  const organismeOf: number[] = [];
  for (let i = 0; i < dossierCount; i++) {
    const cfa = random.int(0, ORGANISME_COUNT - 1);
    organismeOf.push(cfa);
    dossiers.push(generateDossier(random, i, dossierCount, organismes[cfa]));
  }
  ensureEveryState(
    dossiers,
    DOSSIER_ETATS,
    (d) => d.etat,
    (d, s) => {
      d.etat = s;
    },
  );

  const factures: SandboxFacture[] = [];
  // Dossiers that can be invoiced, per training centre, so that an invoice bills its own dossiers.
  const billable: SandboxDossier[][] = organismes.map(() => []);
  dossiers.forEach((d, i) => {
    if (d.etat === 'ENGAGE' || d.etat === 'SOLDE' || d.etat === 'RUPTURE') billable[organismeOf[i]].push(d);
  });
  for (let i = 0; i < factureCount; i++) {
    const cfa = random.int(0, ORGANISME_COUNT - 1);
    const pool = billable[cfa].length > 0 ? billable[cfa] : dossiers;
    if (pool.length === 0) break;
    factures.push(generateFacture(random, i, organismes[cfa], pool));
  }
  ensureEveryState(
    factures,
    FACTURE_ETATS,
    (f) => f.etatFacture,
    (f, s) => setFactureEtat(f, s, f.dateModification, random),
  );
  return { organismes, dossiers, factures };
}

function generateDossier(random: Random, index: number, count: number, cfa: Organisme): SandboxDossier {
  // Years by contiguous blocks: numbering follows the year, like a real upstream's sequences.
  const annee = FIRST_YEAR + Math.floor((index * (LAST_YEAR - FIRST_YEAR + 1)) / count);
  const month = random.chance(0.6) ? 9 : random.int(1, 11);
  const debut = `${annee}-${pad(month, 2)}-${pad(random.int(1, 28), 2)}`;
  const months = random.pick([12, 24, 24, 36]);
  const fin = addDays(
    `${annee + Math.floor((month - 1 + months) / 12)}-${pad(((month - 1 + months) % 12) + 1, 2)}-${debut.slice(8)}`,
    -1,
  );
  const nom = random.pick(NOMS);
  const formation = random.pick(FORMATIONS);
  const etat = random.weighted(dossierWeights(LAST_YEAR - annee));

  // A dossier stops moving once it ends; still-moving ones were touched shortly after the start.
  const lastDay = fin < DATA_HORIZON ? fin : DATA_HORIZON;
  const span = Math.max(0, daysBetween(debut, lastDay));
  const dateModification =
    etat === 'TRANSMIS' || etat === 'EN_COURS_INSTRUCTION'
      ? addDays(debut, random.int(0, Math.min(60, span)))
      : addDays(debut, random.int(Math.floor(span / 2), span));

  const npec = random.int(550, 950) * 10;
  const echeances: Echeance[] = [];
  for (let start = debut, n = 1; start <= fin; n++) {
    const end = addDays(start, 182) < fin ? addDays(start, 182) : fin;
    echeances.push({ numeroEcheance: n, dateDebutEcheance: start, dateFinEcheance: end, montant: cents(npec / 2) });
    start = addDays(end, 1);
  }
  const frais: FraisAnnexe[] = [];
  if (random.chance(0.3)) frais.push({ type: 'PREMIER_EQUIPEMENT', montant: random.int(2, 50) * 10 });
  if (random.chance(0.2)) frais.push({ type: 'HEBERGEMENT', montant: random.int(10, 60) * 6 });
  if (random.chance(0.2)) frais.push({ type: 'RESTAURATION', montant: random.int(20, 120) * 3 });
  const engagement = cents(echeances.reduce((s, e) => s + e.montant, 0) + frais.reduce((s, f) => s + f.montant, 0));
  const seq = index + 1;
  return {
    numeroInterne: `DOS-${annee}-${pad(seq, 6)}`,
    numeroExterne: `EXT-${annee}-${pad(seq, 6)}`,
    numeroDeca: `${random.pick(DEPARTEMENTS)}${annee}${pad(month, 2)}${pad(seq % 100000, 5)}`,
    anneeDossier: annee,
    etat,
    dateModification,
    engagement,
    cerfa: {
      employeur: { siret: siret(random), denomination: denomination(random, random.pick(NOMS)) },
      apprenti: {
        nom: nom.toUpperCase(),
        prenom: random.pick(PRENOMS),
        dateNaissance: addDays(debut, -random.int(16 * 365, 26 * 365)),
      },
      contrat: { dateDebutContrat: debut, dateFinContrat: fin },
      formation: { rncp: formation.rncp, intituleQualification: formation.intituleQualification },
      organismeFormation: { siret: cfa.siret },
    },
    echeances,
    detailsFacturation: {
      niveauPriseEnCharge: npec,
      montantEngage: engagement,
      frequenceFacturation: 'SEMESTRIELLE',
    },
    engagementsFraisAnnexe: frais,
  };
}

function generateFacture(random: Random, index: number, cfa: Organisme, pool: SandboxDossier[]): SandboxFacture {
  const lines = Math.min(pool.length, random.pick([1, 1, 1, 2, 3]));
  const chosen = new Set<SandboxDossier>();
  while (chosen.size < lines) chosen.add(random.pick(pool));
  const dossiers = [...chosen].map((d) => ({
    numeroInterneDossier: d.numeroInterne,
    numeroExterneDossier: d.numeroExterne,
    montant: d.echeances.length > 0 ? random.pick(d.echeances).montant : cents(d.engagement / 2),
  }));
  // Billed after the last of its contracts started, never before.
  const latest = [...chosen]
    .map((d) => d.cerfa.contrat.dateDebutContrat)
    .sort()
    .at(-1)!;
  const span = Math.max(0, daysBetween(latest, DATA_HORIZON));
  const dateEmission = addDays(latest, random.int(Math.min(30, span), Math.min(span, 720)));
  const annee = Number(dateEmission.slice(0, 4));
  const facture: SandboxFacture = {
    numeroInterneFacture: `FAC-${annee}-${pad(index + 1, 6)}`,
    referenceFactureCFA: `F${annee}-${pad(random.int(1, 99999), 5)}`,
    anneeFacture: annee,
    dateEmission,
    dateModification: dateEmission,
    organismeFormation: { siret: cfa.siret, IBAN: cfa.IBAN },
    montantFacture: cents(dossiers.reduce((s, d) => s + d.montant, 0)),
    etatFacture: 'TRANSMIS',
    referenceVirement: null,
    dateReglement: null,
    commentaire: null,
    dossiers,
  };
  const etat = random.weighted(FACTURE_WEIGHTS);
  setFactureEtat(facture, etat, clampToHorizon(addDays(dateEmission, random.int(3, 60))), random);
  return facture;
}

function clampToHorizon(date: string): string {
  return date < DATA_HORIZON ? date : DATA_HORIZON;
}

/** Keeps the fields that depend on the state coherent (payment reference, comment). */
export function setFactureEtat(f: SandboxFacture, etat: FactureEtat, date: string, random: Random): void {
  f.etatFacture = etat;
  f.dateModification = date;
  if (etat === 'REGLE') {
    f.dateReglement = date;
    f.referenceVirement = `VIR${date.replaceAll('-', '')}${random.digits(6)}`;
  } else {
    f.dateReglement = null;
    f.referenceVirement = null;
  }
  const comments = FACTURE_COMMENTS[etat];
  f.commentaire = comments ? random.pick(comments) : null;
}

/**
 * Weighted draws can miss a rare state in a small dataset; tests rely on every state being
 * present, so missing ones are forced onto records of the most common state.
 */
function ensureEveryState<R, S extends string>(
  records: R[],
  states: readonly S[],
  get: (r: R) => S,
  set: (r: R, s: S) => void,
): void {
  if (records.length < states.length) return;
  for (const state of states) {
    if (records.some((r) => get(r) === state)) continue;
    const counts = new Map<S, number>();
    for (const r of records) counts.set(get(r), (counts.get(get(r)) ?? 0) + 1);
    const common = [...counts.entries()].sort((a, b) => b[1] - a[1])[0][0];
    const victim = records.findLast((r) => get(r) === common)!;
    set(victim, state);
  }
}
