/**
 * Examples of every operation of the route manifest: the request body of each operation that
 * takes one and the answer of each success status, typed from the manifest so a missing or
 * misshaped example does not compile; the error bodies by status; /doc shows them beside the
 * schemas. A test checks each against its schema with the service's own validation.
 */
import type { ErrorStatus, OperationId, Operations } from './route-manifest.js';
import type { BodyOf, ReplyOf } from './operation-types.js';
import type { ErrorBody, Webhook } from './generated/types.js';
import { EXAMPLE_SECRET, EXAMPLE_SIGNING_SECRET, notificationExamples } from './event-examples.js';
import { ERROR_CODES } from './error-codes.js';

type AnswerOf<Op extends OperationId, S> = Extract<ReplyOf<Op>, { status: S }>['body'];

export type OperationExample<Op extends OperationId> = {
  responses: { [S in keyof Operations[Op]['responses'] & number]: AnswerOf<Op, S> };
} & (BodyOf<Op> extends undefined ? { request?: never } : { request: BodyOf<Op> });

const JOB_ID = '3b241101-e2bb-4255-8caf-4136c566a962';
const SYNC_ID = '9f8b7c6d-5e4f-4a3b-9c2d-1e0f2a3b4c5d';
const WEBHOOK_ID = 'b7e6d5c4-3a2b-4c1d-8e9f-0a1b2c3d4e5f';
const DELIVERY_ID = '5f2b8e1d9a7c4b3e6d0f1a2c8b9e7d4f';
const CALLBACK_URL = 'https://erp.cfa-exemple.fr/opco-events';
/** A tenant as operators see it: the SHA-256 of its X-API-KEY (P9). */
const TENANT = '6f1ed002ab5595859014ebf0951522d9a0b0f0c0b2fbbb9e6d9b8e3d46f1e2a1';

const AUDIT_SUBMISSION = {
  id: '9a0e4f5c2b7d1e83',
  at: '2026-11-20T09:14:01.021Z',
  tenant: TENANT,
  actor: 'tenant',
  action: 'postFacture',
  opcoId: 'sandbox',
  targets: { jobId: JOB_ID },
  outcome: { status: 202, idempotency: 'new' },
  requestId: '0b8f4a2e-6f3d-4c1a-9e57-2d8c1b0a9f64',
  clientAddress: '203.0.113.24',
} as const;
const AUDIT_WEBHOOK_DELETE = {
  id: '1d2c3b4a59687f0e',
  at: '2026-11-20T09:02:45.310Z',
  tenant: TENANT,
  actor: 'tenant',
  action: 'deleteWebhook',
  targets: { webhookId: WEBHOOK_ID },
  outcome: { status: 404, code: 'NOT_FOUND' },
  requestId: '5e6f7a8b-9c0d-4e1f-8a2b-3c4d5e6f7a8b',
  clientAddress: '203.0.113.24',
} as const;

const employeur = { siret: '12345678900011', denomination: 'Boulangerie Martin' };
const apprenti = { nom: 'Durand', prenom: 'Léa', dateNaissance: '2006-03-14' };
const organismeFormation = { siret: '98765432100027', uaiCfa: '0751234A' };
const numeros = { numeroInterne: 'DOS-2026-000123', numeroExterne: 'EXT-88412', numeroDeca: '07520260900012' };
/** "%PDF-1.4\n": files are base64 in the JSON body (D16). */
const PDF = 'JVBERi0xLjQK';

const dossier = {
  status: 'success',
  ...numeros,
  etat: 'ENGAGE',
  engagement: 6850,
  dateModification: '2026-11-18',
  cerfa: {
    employeur,
    apprenti,
    contrat: { dateDebutContrat: '2026-09-01', dateFinContrat: '2028-08-31' },
    formation: { rncp: 'RNCP37682', intituleQualification: 'CAP Boulanger' },
    organismeFormation: { siret: organismeFormation.siret },
  },
};

const accepted = (opcoId: string) =>
  ({
    202: { jobId: JOB_ID, status: 'pending', statusUrl: `/${opcoId}/jobs/${JOB_ID}` },
    200: { jobId: JOB_ID, status: 'duplicate', statusUrl: `/${opcoId}/jobs/${JOB_ID}` },
  }) as const;

const webhook: Webhook = {
  id: WEBHOOK_ID,
  callbackUrl: CALLBACK_URL,
  events: ['job.completed', 'job.failed'],
  active: true,
  createdAt: '2026-11-20T08:30:00.000Z',
};

export const operationExamples: { [Op in OperationId]: OperationExample<Op> } = {
  getHealth: { responses: { 200: { status: 'ok' } } },
  getReady: { responses: { 200: { status: 'ready', store: 'mongodb', queue: 'rabbitmq' } } },
  getOpenApi: {
    responses: {
      200: {
        openapi: '3.0.3',
        info: { title: 'opco-proxy', version: '1' },
        paths: { '/health': { get: { operationId: 'getHealth' } } },
      },
    },
  },
  getReferencePage: {
    responses: { 200: '<!DOCTYPE html><html lang="en"><head><title>opco-proxy API reference</title>…' },
  },
  getReferenceAsset: {
    responses: { 200: '/*! For license information please see swagger-ui-bundle.js.LICENSE.txt */…' },
  },
  getMetrics: {
    responses: {
      200:
        '# HELP opco_proxy_upstream_calls_total Upstream calls, by opco, route and status\n' +
        '# TYPE opco_proxy_upstream_calls_total counter\n' +
        'opco_proxy_upstream_calls_total{opco="sandbox",route="GET /dossiers/etats",status="200"} 42\n',
    },
  },
  getOpcoStatus: { responses: { 200: { status: 'healthy', supportedVersions: ['v1'], uptime: 86400 } } },
  getCfaKeyInfo: { responses: { 200: { status: 'success', dateFinValidite: '2027-06-30', comment: null } } },
  getDossier: { responses: { 200: dossier } },
  listDossierEtats: {
    responses: {
      200: {
        status: 'success',
        total: 2,
        count: 2,
        page: 1,
        EtatDossierResult: [
          { ...numeros, etat: 'ENGAGE' },
          { numeroInterne: 'DOS-2026-000124', numeroExterne: 'EXT-88413', etat: 'TRANSMIS' },
        ],
      },
    },
  },
  listDossiers: {
    responses: { 200: { status: 'success', dossiers: [dossier], numerosInternesIntrouvables: ['DOS-2026-000999'] } },
  },
  postDossier: {
    request: {
      cerfa: {
        employeur,
        apprenti,
        organismeFormation,
        contrat: { dateDebutContrat: '2026-09-01', dateFinContrat: '2028-08-31' },
        formation: { rncp: 'RNCP37682', intituleQualification: 'CAP Boulanger', dateDebutFormation: '2026-09-07' },
      },
      _files: { cerfa: PDF },
    },
    responses: accepted('sandbox'),
  },
  postFacture: {
    request: {
      montantTotal: 2450.5,
      numero: 'FAC-2026-0142',
      dateEmission: '2026-10-05',
      ibanEmetteur: 'FR7630006000011234567890189',
      siretEmetteur: organismeFormation.siret,
      estCertificatRealisation: false,
      lignes: [
        {
          montant: 2100,
          natureLigne: 'PEDAGOGIE',
          numeroDossier: numeros.numeroInterne,
          numeroEcheance: 1,
          numeroDeca: numeros.numeroDeca,
        },
        { montant: 350.5, natureLigne: 'HEBERGEMENT', numeroDossier: numeros.numeroInterne, quantite: 7 },
      ],
    },
    responses: accepted('sandbox'),
  },
  listFactureEtats: {
    responses: {
      200: {
        status: 'success',
        total: 1,
        count: 1,
        page: 1,
        factures: [
          {
            numeroInterneFacture: 'F-000457',
            referenceFactureCFA: 'FAC-2026-0142',
            montantFacture: 2450.5,
            etatFacture: 'PAYEE',
            referenceVirement: 'VIR-2026-11-0093',
            dateReglement: '2026-11-02',
            commentaire: null,
            organismeFormation: { siret: organismeFormation.siret, IBAN: 'FR7630006000011234567890189' },
            dossiers: [
              {
                numeroInterneDossier: numeros.numeroInterne,
                numeroExterneDossier: numeros.numeroExterne,
                montant: 2450.5,
              },
            ],
          },
        ],
      },
    },
  },
  postConvention: {
    request: {
      numeroInterneDossier: numeros.numeroInterne,
      employeur,
      apprenti: { nom: 'Durand', prenom: 'Léa', nomUsage: null },
      organismeFormation,
      contrat: { dateDebutContrat: '2026-09-01', dateFinContrat: '2028-08-31' },
      formation: {
        dateDebutFormation: '2026-09-07',
        dateFinFormation: '2028-06-30',
        dureeFormation: 800,
        rncp: 'RNCP37682',
      },
      couts: {
        coutTotalPedagogieCFA: 13700,
        nombreRepasTotaux: 120,
        nombreHebergementTotaux: 14,
        mentionMobiliteInternationale: false,
      },
      dateSignature: '2026-08-28',
      attestationConventionSigneeEntreprise: true,
      attestationConventionSigneeCFA: true,
    },
    responses: accepted('sandbox'),
  },
  postCertificat: {
    request: {
      typeCertificat: 'Intermediaire',
      numeroInterneDossier: numeros.numeroInterne,
      numeroInterneFacture: 'F-000457',
      dateSignature: '2027-03-02',
      employeur,
      apprenti: { nom: 'Durand', prenom: 'Léa' },
      organismeFormation: { siret: organismeFormation.siret },
      echeance: { numero: 1, dateDebut: '2026-09-01', dateFin: '2027-02-28', echeancePartielle: false },
      attestationConservationPieces: true,
    },
    responses: accepted('sandbox'),
  },
  postDocument: {
    request: {
      typeFichier: 'CONVENTION_SIGNEE',
      objets: [{ typeObjet: 'dossier', idObjet: numeros.numeroInterne }],
      _files: { convention: PDF },
    },
    responses: accepted('sandbox'),
  },
  getJob: {
    responses: {
      200: {
        jobId: JOB_ID,
        opcoId: 'sandbox',
        type: 'post-dossier',
        status: 'completed',
        result: {
          numeroInterne: numeros.numeroInterne,
          documents: [{ name: 'document:cerfa', result: { idDocument: 'DOC-5521' } }],
        },
        retries: 0,
        createdAt: '2026-11-20T09:14:01.020Z',
        startedAt: '2026-11-20T09:14:01.180Z',
        completedAt: '2026-11-20T09:14:03.120Z',
        currentStep: 2,
        totalSteps: 2,
        steps: [
          { step: 1, name: 'dossier', status: 'completed' },
          { step: 2, name: 'document:cerfa', status: 'completed' },
        ],
      },
    },
  },
  startSync: {
    request: { opcoId: 'sandbox', minYear: 2024, enablePoller: true },
    responses: { 202: { syncId: SYNC_ID, status: 'pending', statusUrl: `/sync/${SYNC_ID}` } },
  },
  getSync: {
    responses: {
      200: {
        syncId: SYNC_ID,
        opcoId: 'sandbox',
        status: 'processing',
        total: 1240,
        discovered: 1240,
        fetched: 600,
        progress: 0.74,
        batchesCompleted: 12,
        totalBatches: 25,
        estimatedEnd: '2026-11-20T10:02:00.000Z',
        error: null,
        startedAt: '2026-11-20T09:40:00.000Z',
        completedAt: null,
      },
    },
  },
  cancelSync: { responses: { 200: { syncId: SYNC_ID, status: 'cancelled' } } },
  createWebhook: {
    request: { callbackUrl: CALLBACK_URL, events: ['job.completed', 'job.failed'] },
    responses: { 201: { ...webhook, secret: EXAMPLE_SECRET, signingSecret: EXAMPLE_SIGNING_SECRET } },
  },
  listWebhooks: { responses: { 200: [webhook] } },
  updateWebhook: {
    request: { events: ['job.completed', 'job.failed', 'sync.completed'], active: true },
    responses: { 200: { ...webhook, events: ['job.completed', 'job.failed', 'sync.completed'] } },
  },
  deleteWebhook: { responses: { 200: { deleted: true } } },
  listWebhookDeliveries: {
    responses: {
      200: [
        {
          id: DELIVERY_ID,
          webhookId: WEBHOOK_ID,
          event: 'job.completed',
          payload: notificationExamples['job.completed'],
          status: 'delivered',
          statusCode: 204,
          attempts: 1,
          error: null,
          deliveredAt: '2026-11-20T09:14:03.410Z',
        },
      ],
    },
  },
  testWebhook: { responses: { 202: { deliveryId: DELIVERY_ID, event: 'webhook.test', status: 'retrying' } } },
  resendWebhookDelivery: { responses: { 202: { deliveryId: DELIVERY_ID, event: 'job.failed', status: 'retrying' } } },
  recoverWebhookDeliveries: { request: { since: '2026-11-19T22:00:00Z' }, responses: { 202: { recovered: 3 } } },
  rotateWebhookSecret: {
    responses: {
      200: {
        id: WEBHOOK_ID,
        secret: 'e4d2c0b8a69e8c7a5f4d3b2a1908f7e6d5c4b3a29180f7e6d5c4b3a291807f6e',
        signingSecret: 'whsec_5NLAuKaejHpfTTsqGQj35tXEs6KRgPfm1cSzopGAf24=',
        previousSecretExpiresAt: '2026-11-21T09:00:00.000Z',
      },
    },
  },
  listPollers: {
    responses: {
      200: [
        {
          opcoId: 'sandbox',
          status: 'active',
          intervalMs: 900000,
          lastPollAt: '2026-11-20T09:45:00.000Z',
          nextPollAt: '2026-11-20T10:00:00.000Z',
          lastError: null,
          createdAt: '2026-11-20T09:40:00.000Z',
        },
      ],
    },
  },
  deletePoller: { responses: { 200: { deleted: true } } },
  listAudit: {
    responses: { 200: { items: [AUDIT_SUBMISSION, AUDIT_WEBHOOK_DELETE], next: 'WzE3NjM2MjY5MjUwMDAsImE3ZjMiXQ' } },
  },

  // Operators (P9)
  listAdminJobs: {
    responses: {
      200: {
        counts: [{ opcoId: 'sandbox', pending: 2, processing: 1, completed: 418, failed: 3 }],
        items: [
          {
            tenant: TENANT,
            job: {
              jobId: JOB_ID,
              opcoId: 'sandbox',
              type: 'post-facture',
              status: 'failed',
              retries: 3,
              createdAt: '2026-11-20T09:14:01.020Z',
              startedAt: '2026-11-20T09:14:01.180Z',
              completedAt: '2026-11-20T09:14:09.400Z',
              error: {
                code: 'UPSTREAM_ERROR',
                message: 'upstream answered 422',
                upstream: { message: 'numéro de facture déjà utilisé' },
              },
            },
          },
        ],
        next: null,
      },
    },
  },
  getAdminJob: {
    responses: {
      200: {
        tenant: TENANT,
        job: {
          jobId: JOB_ID,
          opcoId: 'sandbox',
          type: 'post-facture',
          status: 'failed',
          retries: 2,
          createdAt: '2026-11-20T09:14:01.020Z',
          startedAt: '2026-11-20T09:14:01.180Z',
          completedAt: '2026-11-20T09:14:09.400Z',
          error: { code: 'UPSTREAM_ERROR', message: 'upstream answered 503', upstream: { message: 'maintenance' } },
        },
        steps: [{ step: 1, name: 'post-facture', status: 'failed', attempts: 3, uncertain: false }],
        retry: { possible: true, until: '2026-11-21T09:14:09.400Z', reason: null },
        operatorRetries: 0,
      },
    },
  },
  retryAdminJob: {
    responses: { 202: { jobId: JOB_ID, status: 'pending', statusUrl: `/sandbox/jobs/${JOB_ID}` } },
  },
  retryAdminJobs: {
    request: { opcoId: 'sandbox', code: 'UPSTREAM_ERROR', failedSince: '2026-11-20T09:00:00.000Z', dryRun: true },
    responses: { 200: { dryRun: true, matched: 12, retried: 11, notRetryable: 1, jobIds: [JOB_ID], more: false } },
  },
  getAdminHistory: {
    responses: {
      200: {
        since: '2026-11-20T09:00:00.000Z',
        until: '2026-11-20T09:03:00.000Z',
        stepSeconds: 60,
        times: ['2026-11-20T09:00:00.000Z', '2026-11-20T09:01:00.000Z', '2026-11-20T09:02:00.000Z'],
        series: [
          { name: 'requests', labels: { class: '2xx' }, values: [412, 398, null] },
          { name: 'upstream', labels: { opcoId: 'sandbox', outcome: '5xx' }, values: [0, 14, null] },
          { name: 'jobs', labels: { opcoId: 'sandbox', outcome: 'failed' }, values: [0, 3, null] },
        ],
        limits: [{ opcoId: 'sandbox', perStep: 60 }],
      },
    },
  },
  listAdminDeliveries: {
    responses: {
      200: {
        items: [
          {
            id: DELIVERY_ID,
            webhookId: WEBHOOK_ID,
            tenant: TENANT,
            target: CALLBACK_URL,
            event: 'job.failed',
            status: 'failed',
            statusCode: 503,
            attempts: 4,
            error: 'receiver answered 503',
            createdAt: '2026-11-20T09:14:09.500Z',
            deliveredAt: null,
          },
        ],
        next: null,
      },
    },
  },
  resendAdminDelivery: { responses: { 202: { deliveryId: DELIVERY_ID, event: 'job.failed', status: 'retrying' } } },
  listAdminAudit: {
    responses: {
      200: {
        items: [
          {
            id: '7c41e0a2b9d8f3a6',
            at: '2026-11-20T09:20:11.002Z',
            tenant: TENANT,
            actor: 'operator',
            action: 'resendAdminDelivery',
            targets: { deliveryId: DELIVERY_ID, webhookId: WEBHOOK_ID },
            outcome: { status: 202 },
            requestId: 'c3b0f1d2-1c7e-4a55-9d0e-53a1f6c2e0aa',
            clientAddress: '192.0.2.10',
          },
          AUDIT_SUBMISSION,
        ],
        next: null,
      },
    },
  },
  listAdminWebhooks: {
    responses: {
      200: {
        items: [
          {
            id: WEBHOOK_ID,
            tenant: TENANT,
            target: CALLBACK_URL,
            events: ['job.completed', 'job.failed'],
            active: false,
            createdAt: '2026-11-01T08:30:00.000Z',
            failingSince: '2026-11-14T22:10:00.000Z',
            disabledAt: '2026-11-19T22:10:05.000Z',
            disabledReason: 'every delivery failed since 2026-11-14T22:10:00.000Z',
          },
        ],
        next: null,
      },
    },
  },
  listAdminSyncs: {
    responses: {
      200: {
        items: [
          {
            tenant: TENANT,
            sync: {
              syncId: SYNC_ID,
              opcoId: 'sandbox',
              status: 'processing',
              total: 1240,
              discovered: 1240,
              fetched: 600,
              progress: 0.48,
              batchesCompleted: 12,
              totalBatches: 25,
              estimatedEnd: '2026-11-20T10:02:00.000Z',
              error: null,
              startedAt: '2026-11-20T09:40:00.000Z',
              completedAt: null,
            },
          },
        ],
        next: null,
      },
    },
  },
  listAdminPollers: {
    responses: {
      200: {
        items: [
          {
            tenant: TENANT,
            poller: {
              opcoId: 'sandbox',
              status: 'active',
              intervalMs: 900000,
              lastPollAt: '2026-11-20T09:45:00.000Z',
              nextPollAt: '2026-11-20T10:00:00.000Z',
              lastError: null,
              createdAt: '2026-11-20T09:40:00.000Z',
            },
          },
        ],
      },
    },
  },
  listAdminUpstreams: {
    responses: {
      200: {
        items: [
          {
            opcoId: 'sandbox',
            adapter: 'sandbox',
            rateLimit: { limit: 60, windowMs: 60000 },
            window: { requests: 41, errors: 1, rateLimited: 0, averageLatencyMs: 182.5 },
            admission: { provider: 'store-budget', used: 41, waiting: 0 },
          },
        ],
      },
    },
  },
  listAdminQueues: {
    responses: {
      200: { kind: 'rabbitmq', items: [{ queue: 'jobs', ready: 3, delayed: 1, unacknowledged: null, consumers: 2 }] },
    },
  },
  getConsole: { responses: { 200: '<!DOCTYPE html><html lang="en"><head><title>opco-proxy console</title>…' } },
  getConsoleScript: { responses: { 200: '(()=>{var …' } },
  getConsoleStyle: { responses: { 200: ':root{color-scheme:light dark}…' } },
};

/** One error body per documented error status (SPEC 7). */
export const errorExamples: Record<ErrorStatus, ErrorBody> = {
  400: {
    status: 'error',
    code: 'VALIDATION_ERROR',
    description: 'invalid body',
    errors: [
      'lignes.0.natureLigne: Invalid enum value, expected one of PEDAGOGIE, MOBILITE, HEBERGEMENT, RESTAURATION, PREMIEREQUIPEMENT, MAJORATION_RQTH',
    ],
  },
  401: { status: 'error', code: 'UNAUTHORIZED', description: ERROR_CODES.UNAUTHORIZED.description },
  403: { status: 'error', code: 'HTTP_ERROR', description: ERROR_CODES.HTTP_ERROR.description },
  404: { status: 'error', code: 'NOT_FOUND', description: `job ${JOB_ID} not found` },
  409: {
    status: 'error',
    code: 'CONFLICT',
    description: 'a sync of sandbox is already processing for this API key',
    syncId: SYNC_ID,
  },
  413: { status: 'error', code: 'PAYLOAD_TOO_LARGE', description: ERROR_CODES.PAYLOAD_TOO_LARGE.description },
  415: { status: 'error', code: 'UNSUPPORTED_MEDIA_TYPE', description: ERROR_CODES.UNSUPPORTED_MEDIA_TYPE.description },
  422: {
    status: 'error',
    code: 'UPSTREAM_ERROR',
    description: 'upstream answered 422',
    upstream: { message: 'dateFinContrat précède dateDebutContrat' },
  },
  429: { status: 'error', code: 'RATE_LIMITED', description: ERROR_CODES.RATE_LIMITED.description },
  500: { status: 'error', code: 'INTERNAL_ERROR', description: ERROR_CODES.INTERNAL_ERROR.description },
  501: { status: 'error', code: 'NOT_SUPPORTED', description: ERROR_CODES.NOT_SUPPORTED.description },
  502: { status: 'error', code: 'NETWORK_ERROR', description: ERROR_CODES.NETWORK_ERROR.description },
  503: { status: 'error', code: 'UNAVAILABLE', description: ERROR_CODES.UNAVAILABLE.description },
  504: { status: 'error', code: 'TIMEOUT', description: ERROR_CODES.TIMEOUT.description },
};

/** The `default` answer: an upstream status the table has no entry for, passed through. */
export const otherErrorExample: ErrorBody = {
  status: 'error',
  code: 'UPSTREAM_ERROR',
  description: 'upstream answered 409',
  upstream: { message: 'conflit de version du dossier' },
};
