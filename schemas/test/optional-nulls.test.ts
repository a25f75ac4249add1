/**
 * Optional means null is fine (issue 37): an optional property sent as null is removed before the
 * body is validated, at any depth, as the body's schema says; a required one sent as null is
 * refused and named; a property the schema lets be null keeps its null.
 */
import t from 'tap';
import {
  buildOpenApi,
  removeOptionalNulls,
  schemaIds,
  validate,
  validateRequest,
  type JsonSchema,
} from '../src/index.js';

type Json = Record<string, any>;

const certificat = () => ({
  typeCertificat: 'Final',
  numeroInterneDossier: 'D-1',
  numeroInterneFacture: null,
  dateSignature: null,
  representantLegal: null,
  employeur: { siret: '12345678900011' },
  apprenti: { nom: 'Dupont', prenom: 'Jean', nomUsage: null },
  organismeFormation: { siret: '98765432100022' },
  echeance: { numero: 1, codification: null, duree: null, dateDebut: null, echeancePartielle: null },
  _files: null,
});

const facture = () => ({
  montantTotal: 1200.5,
  numero: 'F-1',
  dateEmission: '2024-10-01',
  ibanEmetteur: 'FR7612345678901234567890123',
  siretEmetteur: '98765432100022',
  estCertificatRealisation: null,
  lignes: [
    {
      montant: 600,
      natureLigne: 'PEDAGOGIE',
      numeroDossier: 'D-1',
      quantite: null,
      numeroEcheance: null,
      codificationEcheance: null,
      numeroDeca: null,
    },
    { montant: 600.5, natureLigne: 'PEDAGOGIE', numeroDossier: 'D-2', quantite: 1, numeroDeca: null },
  ],
});

const convention = () => ({
  numeroInterneDossier: 'D-1',
  employeur: { siret: '12345678900011' },
  apprenti: { nom: 'Martin', prenom: 'Léa', nomUsage: null },
  contrat: { dateDebutContrat: '2024-09-01', dateFinContrat: '2026-08-31' },
  organismeFormation: { siret: '98765432100022', uaiCfa: null },
  formation: { dateDebutFormation: '2024-09-02', dateFinFormation: '2026-06-30', dureeFormation: 1200, rncp: null },
  couts: {
    coutTotalPedagogieCFA: 14000,
    montantRQTHAnnee1: null,
    montantRQTHAnnee2: null,
    mentionMobiliteInternationale: null,
  },
  mandatEmployeur: null,
  attestationConventionSigneeEntreprise: null,
});

/** Every path of `value` that holds null. */
function nullPaths(value: unknown, path = ''): string[] {
  if (value === null) return [path];
  if (typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, item]) => nullPaths(item, path ? `${path}.${key}` : key));
}

t.test('before: the validation alone refuses the optional nulls the serializers write', async (t) => {
  t.match(validate(schemaIds.certificatBody, certificat()), {
    valid: false,
    errors: [
      'numeroInterneFacture: Expected string or number, received null',
      /dateSignature/,
      /representantLegal/,
      /apprenti\.nomUsage/,
      /echeance\.codification/,
      /echeance\.duree/,
      /echeance\.dateDebut/,
      /echeance\.echeancePartielle/,
      /_files/,
    ],
  });
  t.equal(validate(schemaIds.conventionBody, convention()).valid, false);
  t.equal(validate(schemaIds.factureBody, facture()).valid, false);
});

t.test('an optional null is removed at any depth, and the body is valid', async (t) => {
  const body = certificat();
  t.same(validateRequest(schemaIds.certificatBody, body), { valid: true });
  t.same(nullPaths(body), [], 'no null left');
  t.same(body.apprenti, { nom: 'Dupont', prenom: 'Jean' }, 'the property is gone, not set to undefined');
  t.same(body.echeance, { numero: 1 });
  t.notOk('_files' in body && 'representantLegal' in body);
});

t.test('inside array items: every ligne of a facture', async (t) => {
  const body = facture();
  t.same(validateRequest(schemaIds.factureBody, body), { valid: true });
  t.same(body.lignes, [
    { montant: 600, natureLigne: 'PEDAGOGIE', numeroDossier: 'D-1' },
    { montant: 600.5, natureLigne: 'PEDAGOGIE', numeroDossier: 'D-2', quantite: 1 },
  ]);
  t.notOk('estCertificatRealisation' in body);
  const parsed = JSON.parse('{"lignes":[{"montant":1,"quantite":null,"__proto__":{"polluted":true}}]}') as Json;
  removeOptionalNulls(schemaIds.factureBody, parsed);
  const ligne = parsed.lignes[0] as Json;
  t.same(Object.keys(ligne), ['montant', '__proto__'], 'a ligne copied without its null, other keys in order');
  t.equal(Object.getPrototypeOf(ligne), Object.prototype, 'a __proto__ key stays a key');
  t.equal(ligne.polluted, undefined);
  const documents = {
    typeFichier: 'convention',
    objets: [{ typeObjet: 'dossier', idObjet: 'D-1', extra: null }, null],
  };
  t.match(
    validateRequest(schemaIds.documentBody, documents),
    { valid: false, errors: ['objets.1: Expected object, received null'] },
    'a null item is not a property: it stays and is refused',
  );
  t.same(
    documents.objets[0],
    { typeObjet: 'dossier', idObjet: 'D-1', extra: null },
    'an undeclared property is left to the transforms',
  );
});

t.test('a property declared ["string","null"] keeps its null; other optional nulls go', async (t) => {
  const body = convention();
  t.same(validateRequest(schemaIds.conventionBody, body), { valid: true });
  t.same(nullPaths(body), ['apprenti.nomUsage']);
  t.same(body.couts, { coutTotalPedagogieCFA: 14000 });
  t.same(body.organismeFormation, { siret: '98765432100022' });
});

t.test('a required null is a 400 that names it, and stays in the body', async (t) => {
  const body: Json = certificat();
  body.apprenti.nom = null;
  body.typeCertificat = null;
  body.employeur = null;
  t.same(
    validateRequest(schemaIds.certificatBody, body),
    {
      valid: false,
      errors: [
        'typeCertificat: Expected string, received null',
        'employeur: Expected object, received null',
        'apprenti.nom: Expected string, received null',
      ],
    },
    'one message each: the enum of typeCertificat is not repeated',
  );
  t.equal(body.apprenti.nom, null);
  const facturePart: Json = facture();
  facturePart.lignes[1].numeroDossier = null;
  t.same(validateRequest(schemaIds.factureBody, facturePart), {
    valid: false,
    errors: ['lignes.1.numeroDossier: Expected string, received null'],
  });
  t.same(validateRequest(schemaIds.webhookRecoverBody, { since: null }), {
    valid: false,
    errors: ['since: Expected string, received null'],
  });
});

t.test('other bodies: $ref properties, closed objects, webhooks and sync', async (t) => {
  const created = { callbackUrl: 'https://cfa.example/hook', events: ['job.completed'], description: null };
  t.same(validateRequest(schemaIds.webhookCreateBody, created), { valid: true });
  t.same(created, { callbackUrl: 'https://cfa.example/hook', events: ['job.completed'] });
  const update = { callbackUrl: null, events: null, active: true };
  t.same(validateRequest(schemaIds.webhookUpdateBody, update), { valid: true }, 'an optional $ref property');
  t.same(update, { active: true });
  t.same(
    validateRequest(schemaIds.webhookUpdateBody, { description: null }),
    { valid: false, errors: ['body: Must contain at least one of callbackUrl, events, active, description'] },
    'only nulls is no change',
  );
  t.same(validateRequest(schemaIds.syncBody, { opcoId: 'sandbox', minYear: null, enablePoller: null }), {
    valid: true,
  });
  t.match(
    validateRequest(schemaIds.syncBody, { opcoId: 'sandbox', colour: null }),
    { valid: false, errors: ['colour: Unrecognized field'] },
    'an unknown field is not an optional one',
  );
  t.same(
    validateRequest(schemaIds.hubKeyBody, { name: 'a', fleetId: 'f', tenantId: null }),
    { valid: true },
    'the hub key body too',
  );
});

t.test('the plan follows $ref, allOf, anyOf and oneOf; a required anywhere keeps the null', async (t) => {
  const schema: JsonSchema = {
    type: 'object',
    allOf: [{ properties: { a: { type: 'string' }, b: { type: 'number' } }, required: ['b'] }],
    oneOf: [
      { properties: { c: { type: 'string' }, d: { type: ['string', 'null'] } } },
      { properties: { c: { type: 'number' }, e: { enum: ['x', null] }, f: { const: 1 } } },
    ],
    properties: {
      url: { $ref: 'callback-url.schema.json' },
      list: { type: 'array', items: { allOf: [{ $ref: 'sync-body.schema.json' }] } },
      any: { description: 'no type: null is a value' },
    },
  };
  const value: Json = {
    a: null,
    b: null,
    c: null,
    d: null,
    e: null,
    f: null,
    url: null,
    any: null,
    list: [{ opcoId: 'x', minYear: null }, { opcoId: null }],
  };
  removeOptionalNulls(schema, value);
  t.same(value, { b: null, d: null, e: null, any: null, list: [{ opcoId: 'x' }, { opcoId: null }] });
});

t.test('/doc: optional properties of request bodies are nullable, and it says why', async (t) => {
  const doc = buildOpenApi() as unknown as Json;
  const schemas = doc.components.schemas;
  t.same(schemas.CertificatBody.properties.apprenti.properties.nomUsage, { type: 'string', nullable: true });
  t.same(
    schemas.CertificatBody.properties.apprenti.properties.nom,
    { type: 'string', minLength: 1 },
    'required: not nullable',
  );
  t.same(
    schemas.FactureBody.properties.lignes.items.properties.quantite,
    { type: 'number', nullable: true },
    'in array items',
  );
  t.same(
    schemas.ConventionBody.properties.apprenti.properties.nomUsage,
    { type: 'string', nullable: true },
    'already nullable, unchanged',
  );
  t.same(
    schemas.WebhookUpdateBody.properties.callbackUrl,
    { allOf: [{ $ref: '#/components/schemas/CallbackUrl' }], nullable: true },
    'a $ref wrapped',
  );
  t.same(schemas.WebhookCreateBody.properties.callbackUrl, { $ref: '#/components/schemas/CallbackUrl' });
  t.notOk(schemas.Webhook.properties.description.nullable, 'answers are not touched');
  t.notOk(schemas.CallbackUrl.nullable, 'nor the shared components a body refers to');
  for (const [path, item] of Object.entries(doc.paths as Json)) {
    for (const [method, op] of Object.entries(item as Json)) {
      if (op.requestBody)
        t.match(op.requestBody.description, /optional field sent as null is treated as absent/, `${method} ${path}`);
    }
  }
});
