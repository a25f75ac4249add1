/**
 * The sandbox's in-memory upstream state: the generated records, the ones created through the
 * POST routes, and the state moves that `advance()` simulates between two polls.
 */
import { generateData, setFactureEtat } from './generator.js';
import { isIsoDate, today } from './identities.js';
import { Random } from './prng.js';
import type {
  DossierEtat,
  FactureDossierLine,
  FactureEtat,
  Organisme,
  SandboxCerfa,
  SandboxDossier,
  SandboxFacture,
} from './records.js';

/** Plausible next state; terminal states only move when no live record is left to advance. */
const NEXT_DOSSIER: Record<DossierEtat, (r: Random) => DossierEtat> = {
  TRANSMIS: () => 'EN_COURS_INSTRUCTION',
  EN_COURS_INSTRUCTION: (r) => (r.chance(0.8) ? 'ENGAGE' : 'REFUSE'),
  ENGAGE: (r) => (r.chance(0.7) ? 'SOLDE' : 'RUPTURE'),
  ANNULE: () => 'TRANSMIS',
  REFUSE: () => 'TRANSMIS',
  RUPTURE: () => 'SOLDE',
  SOLDE: () => 'ANNULE',
};
const LIVE_DOSSIER: ReadonlySet<DossierEtat> = new Set(['TRANSMIS', 'EN_COURS_INSTRUCTION', 'ENGAGE']);

const NEXT_FACTURE: Record<FactureEtat, (r: Random) => FactureEtat> = {
  TRANSMIS: () => 'EN_COURS_REGLEMENT',
  EN_COURS_REGLEMENT: (r) => (r.chance(0.8) ? 'REGLE' : 'BLOQUE'),
  BLOQUE: () => 'RELANCE',
  RELANCE: () => 'EN_COURS_REGLEMENT',
  REGLE: () => 'ANNULE',
  REFUSE: () => 'TRANSMIS',
  ANNULE: () => 'TRANSMIS',
};
const LIVE_FACTURE: ReadonlySet<FactureEtat> = new Set(['TRANSMIS', 'EN_COURS_REGLEMENT', 'BLOQUE', 'RELANCE']);

export interface DatasetOptions {
  seed: number;
  dossierCount: number;
  factureCount: number;
}

/** Bodies of the POST routes, as far as the sandbox reads them. */
export interface NewDossier {
  cerfa: Record<string, unknown>;
  numeroExterne?: string;
  numeroDeca?: string;
}

const pad6 = (n: number) => String(n).padStart(6, '0');

export class Dataset {
  readonly organismes: Organisme[];
  readonly dossiers: SandboxDossier[];
  readonly factures: SandboxFacture[];
  private readonly byNumeroInterne = new Map<string, SandboxDossier>();
  private readonly byNumeroFacture = new Map<string, SandboxFacture>();
  // A separate stream so that advancing never changes what another seed-equal sandbox generates.
  private readonly moves: Random;
  private created = { dossiers: 0, factures: 0, other: 0 };

  constructor(options: DatasetOptions) {
    const data = generateData(options.seed, options.dossierCount, options.factureCount);
    this.organismes = data.organismes;
    this.dossiers = data.dossiers;
    this.factures = data.factures;
    for (const d of this.dossiers) this.byNumeroInterne.set(d.numeroInterne, d);
    for (const f of this.factures) this.byNumeroFacture.set(f.numeroInterneFacture, f);
    this.moves = new Random((options.seed ^ 0x5eed5eed) >>> 0);
  }

  dossier(numeroInterne: string): SandboxDossier | undefined {
    return this.byNumeroInterne.get(numeroInterne);
  }

  /** numeroDeca may be omitted: a worker checking for a crash duplicate only knows numeroExterne. */
  dossierByExterne(numeroExterne: string, numeroDeca?: string): SandboxDossier | undefined {
    return this.dossiers.find(
      (d) => d.numeroExterne === numeroExterne && (numeroDeca === undefined || d.numeroDeca === numeroDeca),
    );
  }

  facture(numeroInterneFacture: string): SandboxFacture | undefined {
    return this.byNumeroFacture.get(numeroInterneFacture);
  }

  createDossier(body: NewDossier): SandboxDossier {
    const n = ++this.created.dossiers;
    const cerfa = body.cerfa as unknown as SandboxCerfa;
    const debut = (cerfa.contrat as { dateDebutContrat?: unknown } | undefined)?.dateDebutContrat;
    const nested = cerfa as { numeroExterne?: unknown };
    const numeroExterne =
      body.numeroExterne ?? (typeof nested.numeroExterne === 'string' ? nested.numeroExterne : `EXT-NEW-${pad6(n)}`);
    const dossier: SandboxDossier = {
      numeroInterne: `DOS-NEW-${pad6(n)}`,
      numeroExterne,
      numeroDeca: body.numeroDeca ?? '',
      anneeDossier:
        typeof debut === 'string' && isIsoDate(debut) ? Number(debut.slice(0, 4)) : Number(today().slice(0, 4)),
      etat: 'TRANSMIS',
      dateModification: today(),
      engagement: 0,
      cerfa,
      echeances: [],
      detailsFacturation: {},
      engagementsFraisAnnexe: [],
    };
    this.dossiers.push(dossier);
    this.byNumeroInterne.set(dossier.numeroInterne, dossier);
    return dossier;
  }

  /** Reads the metadata leniently: the sandbox accepts what the proxy sends and shows it in etats. */
  createFacture(meta: Record<string, unknown>): SandboxFacture {
    const n = ++this.created.factures;
    const date = today();
    const emission =
      typeof meta['dateEmission'] === 'string' && isIsoDate(meta['dateEmission']) ? meta['dateEmission'] : date;
    const lines: FactureDossierLine[] = [];
    for (const ligne of Array.isArray(meta['lignes']) ? meta['lignes'] : []) {
      const numero = (ligne as { numeroDossier?: unknown }).numeroDossier;
      const montant = Number((ligne as { montant?: unknown }).montant) || 0;
      if (typeof numero !== 'string') continue;
      const existing = lines.find((l) => l.numeroInterneDossier === numero);
      if (existing) existing.montant += montant;
      else
        lines.push({
          numeroInterneDossier: numero,
          numeroExterneDossier: this.dossier(numero)?.numeroExterne ?? '',
          montant,
        });
    }
    const facture: SandboxFacture = {
      numeroInterneFacture: `FAC-NEW-${pad6(n)}`,
      referenceFactureCFA: typeof meta['numero'] === 'string' ? meta['numero'] : `FAC-CFA-${pad6(n)}`,
      anneeFacture: Number(emission.slice(0, 4)),
      dateEmission: emission,
      dateModification: date,
      organismeFormation: {
        siret: typeof meta['siretEmetteur'] === 'string' ? meta['siretEmetteur'] : '',
        IBAN: typeof meta['ibanEmetteur'] === 'string' ? meta['ibanEmetteur'] : '',
      },
      montantFacture: Number(meta['montantTotal']) || 0,
      etatFacture: 'TRANSMIS',
      referenceVirement: null,
      dateReglement: null,
      commentaire: null,
      dossiers: lines,
    };
    this.factures.push(facture);
    this.byNumeroFacture.set(facture.numeroInterneFacture, facture);
    return facture;
  }

  /** Sequence for conventions, certificates and documents, which the sandbox does not keep. */
  nextReference(prefix: string): string {
    return `${prefix}-NEW-${pad6(++this.created.other)}`;
  }

  advance(options: { dossiers?: number; factures?: number } = {}): { dossiers: string[]; factures: string[] } {
    const date = today();
    const dossiers = this.pickToMove(this.dossiers, options.dossiers ?? 0, (d) => LIVE_DOSSIER.has(d.etat));
    for (const d of dossiers) {
      d.etat = NEXT_DOSSIER[d.etat](this.moves);
      d.dateModification = date;
    }
    const factures = this.pickToMove(this.factures, options.factures ?? 0, (f) => LIVE_FACTURE.has(f.etatFacture));
    for (const f of factures) setFactureEtat(f, NEXT_FACTURE[f.etatFacture](this.moves), date, this.moves);
    return {
      dossiers: dossiers.map((d) => d.numeroInterne),
      factures: factures.map((f) => f.numeroInterneFacture),
    };
  }

  private pickToMove<R>(records: R[], count: number, live: (r: R) => boolean): R[] {
    const wanted = Math.min(Math.max(0, Math.floor(count)), records.length);
    const chosen: R[] = [];
    for (const pool of [records.filter(live), records.filter((r) => !live(r))]) {
      // Partial Fisher-Yates: distinct picks without scanning the whole pool each time.
      for (let i = 0; i < pool.length && chosen.length < wanted; i++) {
        const j = i + Math.floor(this.moves.float() * (pool.length - i));
        [pool[i], pool[j]] = [pool[j], pool[i]];
        chosen.push(pool[i]);
      }
    }
    return chosen;
  }
}
