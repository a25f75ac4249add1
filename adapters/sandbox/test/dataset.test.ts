import t from 'tap';
import {
  DOSSIER_ETATS,
  Dataset,
  FACTURE_ETATS,
  FIRST_YEAR,
  LAST_YEAR,
  ibanValid,
  luhnValid,
} from '../src/server/index.js';

const make = (seed = 42, dossierCount = 300, factureCount = 120) => new Dataset({ seed, dossierCount, factureCount });

t.test('same seed gives identical data, another seed different data', async (t) => {
  const a = make();
  const b = make();
  const c = make(7);
  t.equal(JSON.stringify(a.dossiers), JSON.stringify(b.dossiers));
  t.equal(JSON.stringify(a.factures), JSON.stringify(b.factures));
  t.not(JSON.stringify(a.dossiers), JSON.stringify(c.dossiers));
});

t.test('default dataset: counts, years, every state', async (t) => {
  const d = make();
  t.equal(d.dossiers.length, 300);
  t.equal(d.factures.length, 120);
  const years = new Set(d.dossiers.map((x) => x.anneeDossier));
  t.same([...years].sort(), [2019, 2020, 2021, 2022, 2023, 2024, 2025]);
  t.equal(FIRST_YEAR, 2019);
  t.equal(LAST_YEAR, 2025);
  for (const year of years) {
    const n = d.dossiers.filter((x) => x.anneeDossier === year).length;
    t.ok(n >= 40 && n <= 45, `year ${year} holds ${n} dossiers`);
  }
  for (const etat of DOSSIER_ETATS)
    t.ok(
      d.dossiers.some((x) => x.etat === etat),
      `dossier state ${etat} present`,
    );
  for (const etat of FACTURE_ETATS)
    t.ok(
      d.factures.some((x) => x.etatFacture === etat),
      `invoice state ${etat} present`,
    );
});

t.test('every state is present even in a tiny dataset', async (t) => {
  const d = make(3, 10, 8);
  t.same(new Set(d.dossiers.map((x) => x.etat)), new Set(DOSSIER_ETATS));
  t.same(new Set(d.factures.map((x) => x.etatFacture)), new Set(FACTURE_ETATS));
});

t.test('identifiers look real and carry valid check digits', async (t) => {
  const d = make();
  const interne = new Set<string>();
  for (const x of d.dossiers) {
    t.match(x.numeroInterne, new RegExp(`^DOS-${x.anneeDossier}-\\d{6}$`));
    t.match(x.numeroDeca, /^\d{14}$/);
    t.match(x.numeroExterne, /^EXT-\d{4}-\d{6}$/);
    interne.add(x.numeroInterne);
    if (!luhnValid(x.cerfa.employeur.siret) || !luhnValid(x.cerfa.organismeFormation.siret)) {
      t.fail(`bad SIRET in ${x.numeroInterne}`);
    }
    t.equal(x.cerfa.employeur.siret.length, 14);
    t.ok(x.cerfa.apprenti.dateNaissance < x.cerfa.contrat.dateDebutContrat);
    t.ok(x.cerfa.contrat.dateDebutContrat < x.cerfa.contrat.dateFinContrat);
    t.equal(x.cerfa.contrat.dateDebutContrat.slice(0, 4), String(x.anneeDossier));
    t.equal(x.echeances[0].dateDebutEcheance, x.cerfa.contrat.dateDebutContrat);
    t.equal(x.echeances.at(-1)!.dateFinEcheance, x.cerfa.contrat.dateFinContrat);
    for (let i = 1; i < x.echeances.length; i++) {
      const previousEnd = new Date(`${x.echeances[i - 1].dateFinEcheance}T00:00:00Z`);
      previousEnd.setUTCDate(previousEnd.getUTCDate() + 1);
      t.equal(x.echeances[i].dateDebutEcheance, previousEnd.toISOString().slice(0, 10), 'instalments are contiguous');
    }
    const sum =
      x.echeances.reduce((s, e) => s + e.montant, 0) + x.engagementsFraisAnnexe.reduce((s, f) => s + f.montant, 0);
    t.equal(Math.round(sum * 100) / 100, x.engagement);
  }
  t.equal(interne.size, 300, 'numeroInterne unique');
  t.ok(luhnValid(d.dossiers[0].cerfa.employeur.siret.slice(0, 9)), 'SIREN part is Luhn-valid too');
  t.notOk(luhnValid('12345678901234'), 'luhn check rejects a wrong number');
  for (const o of d.organismes) {
    t.match(o.IBAN, /^FR76\d{23}$/);
    t.ok(ibanValid(o.IBAN), `IBAN ${o.IBAN} passes mod 97`);
  }
  t.notOk(ibanValid('FR7630004000031234567890144'), 'mod 97 rejects a wrong IBAN');
  for (const f of d.factures) {
    const lineSum = Math.round(f.dossiers.reduce((s, l) => s + l.montant, 0) * 100) / 100;
    t.equal(f.montantFacture, lineSum);
    t.equal(f.anneeFacture, Number(f.dateEmission.slice(0, 4)));
    if (f.etatFacture === 'REGLE') {
      t.match(f.referenceVirement, /^VIR\d{14}$/);
      t.match(f.dateReglement, /^\d{4}-\d{2}-\d{2}$/);
    } else {
      t.equal(f.referenceVirement, null);
      t.equal(f.dateReglement, null);
    }
    for (const l of f.dossiers) {
      const dossier = d.dossier(l.numeroInterneDossier);
      t.ok(dossier, `invoice line points at an existing dossier`);
      t.equal(dossier?.numeroExterne, l.numeroExterneDossier);
      t.equal(
        dossier?.cerfa.organismeFormation.siret,
        f.organismeFormation.siret,
        'invoice and dossier share their CFA',
      );
    }
  }
});

// How fast it generates is for bench/, not for a test on a shared machine.
t.test('10,000 dossiers, each with its own numbers', async (t) => {
  const d = make(1, 10_000, 500);
  t.equal(d.dossiers.length, 10_000);
  t.equal(new Set(d.dossiers.map((x) => x.numeroInterne)).size, 10_000, 'numeroInterne unique');
  t.equal(new Set(d.dossiers.map((x) => x.numeroExterne)).size, 10_000, 'numeroExterne unique');
});
