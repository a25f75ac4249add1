// checkRequest (issue 37): an optional field sent as null is removed from the body before anything
// reads it, so the idempotency fingerprint (canonical JSON SHA-256, plugins/jobs) of a body with
// `x: null` is that of the same body without `x`; a required field sent as null is a 400 naming it.
import t from 'tap';
import { canonicalJsonSha256 } from '../src/application.js';
import { isServiceError } from '../src/errors/errors.js';
import { checkRequest } from '../src/pipeline/request-validation.js';

const facture = (extra: Record<string, unknown> = {}, ligne: Record<string, unknown> = {}) => ({
  montantTotal: 100,
  numero: 'F-1',
  dateEmission: '2024-10-01',
  ibanEmetteur: 'FR7612345678901234567890123',
  siretEmetteur: '98765432100022',
  lignes: [{ montant: 100, natureLigne: 'PEDAGOGIE', numeroDossier: 'D-1', ...ligne }],
  ...extra,
});

t.test('a body with optional nulls has the fingerprint of the same body without them', async (t) => {
  const plain = facture();
  const withNulls = facture({ estCertificatRealisation: null }, { quantite: null, numeroDeca: null });
  t.not(canonicalJsonSha256(withNulls), canonicalJsonSha256(plain), 'before the check they differ');
  const checked = checkRequest('facture-body', withNulls);
  t.equal(checked, withNulls, 'the same object, changed in place: what the handler and the jobs plugin read');
  t.equal(canonicalJsonSha256(checked), canonicalJsonSha256(checkRequest('facture-body', plain)));
});

t.test('a required field sent as null is a 400 VALIDATION_ERROR naming it', async (t) => {
  const body = facture({ numero: null });
  try {
    checkRequest('facture-body', body);
    t.fail('accepted');
  } catch (err) {
    t.ok(isServiceError(err));
    t.match(err, { code: 'VALIDATION_ERROR', status: 400, errors: ['numero: Expected string, received null'] });
  }
});
