/** Client-side helpers for job tests: submit, poll (SPEC 4.13), and sample bodies. */
import { setTimeout as sleep } from 'node:timers/promises';
import { KEY_A, type Reply } from './harness.js';

type Requester = {
  request(
    method: string,
    path: string,
    options?: { key?: string | null; body?: unknown; headers?: Record<string, string> },
  ): Promise<Reply>;
};

export const PDF = Buffer.from('%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF\n');

export async function waitForJob(
  service: Requester,
  statusUrl: string,
  options: { key?: string; timeoutMs?: number; until?: (job: any) => boolean } = {},
): Promise<any> {
  const until = options.until ?? ((job) => job.status === 'completed' || job.status === 'failed');
  const deadline = Date.now() + (options.timeoutMs ?? 20_000);
  let last: Reply | undefined;
  while (Date.now() < deadline) {
    last = await service.request('GET', statusUrl, { key: options.key ?? KEY_A });
    if (last.status === 200 && until(last.body)) return last.body;
    await sleep(50);
  }
  throw new Error(`job at ${statusUrl} did not reach the expected state: ${last?.text}`);
}

export function dossierBody(overrides: Record<string, unknown> = {}): Record<string, any> {
  return {
    cerfa: {
      numeroExterne: `EXT-${Math.random().toString(36).slice(2, 10)}`,
      employeur: { siret: '12345678901234', denomination: '  Boulangerie Martin  ', nom: ' martin ' },
      apprenti: { nom: '  dupont ', prenom: 'léa', nomUsage: null, dateNaissance: '2005-03-14' },
      contrat: {
        dateDebutContrat: '2024-09-01',
        dateFinContrat: '2026-08-31',
        dureeTravailHebdoHeures: 35,
        dureeTravailHebdoMinutes: 0,
      },
      formation: {
        rncp: 'RNCP35316',
        intituleQualification: 'CAP Boulanger',
        dateDebutFormation: '2024-09-02',
        dateFinFormation: '2026-06-30',
      },
      organismeFormation: { siret: '98765432109876' },
    },
    ...overrides,
  };
}

export function factureBody(numeroDossier: string): Record<string, unknown> {
  return {
    montantTotal: 1250.5,
    numero: `FAC-${Date.now()}`,
    dateEmission: '2024-10-15',
    ibanEmetteur: 'FR7630006000011234567890189',
    siretEmetteur: '98765432109876',
    estCertificatRealisation: false,
    lignes: [{ montant: 1250.5, natureLigne: 'PEDAGOGIE', quantite: 1, numeroDossier }],
  };
}

export function conventionBody(numeroInterneDossier: string): Record<string, unknown> {
  return {
    numeroInterneDossier,
    employeur: { siret: '12345678901234' },
    apprenti: { nom: ' durand', prenom: 'paul ', nomUsage: null },
    contrat: { dateDebutContrat: '2024-09-01', dateFinContrat: '2026-08-31' },
    organismeFormation: { siret: '98765432109876', uaiCfa: '0751234A' },
    formation: {
      dateDebutFormation: '2024-09-02',
      dateFinFormation: '2026-06-30',
      dureeFormation: 800,
      rncp: 'RNCP35316',
    },
    couts: { coutTotalPedagogieCFA: 13000 },
    attestationConventionSigneeEntreprise: true,
    attestationConventionSigneeCFA: true,
    attestationConventionSignatureProbante: true,
    attestationConventionConformeJSON: true,
  };
}

export function certificatBody(numeroInterneDossier: string): Record<string, unknown> {
  return {
    typeCertificat: 'Final',
    numeroInterneDossier,
    employeur: { siret: '12345678901234' },
    apprenti: { nom: 'petit ', prenom: ' anne' },
    organismeFormation: { siret: '98765432109876' },
    echeance: { numero: 2, duree: 400 },
  };
}

export function documentBody(numeroInterne: string): Record<string, unknown> {
  return {
    typeFichier: 'convention',
    objets: [{ typeObjet: 'dossier', idObjet: numeroInterne }],
    _files: { convention: PDF.toString('base64') },
  };
}
