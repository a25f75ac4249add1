/** SPEC 4.4 to 4.10: query strings arrive as strings and are checked as strings. */
import t from 'tap';
import { validate, schemaIds } from '../src/index.js';

const errorsOf = (id: string, data: unknown): string[] => {
  const result = validate(id, data);
  return result.valid ? [] : result.errors;
};

t.test('4.4 cfakeyinfo: siren of at least 9 characters and XAPIKEY required', async (t) => {
  t.same(errorsOf(schemaIds.cfakeyinfoQuery, { siren: '123456789', XAPIKEY: 'key' }), []);
  t.same(
    errorsOf(schemaIds.cfakeyinfoQuery, { siren: '12345678901234', XAPIKEY: 'key' }),
    [],
    'a SIRET is long enough',
  );
  t.same(errorsOf(schemaIds.cfakeyinfoQuery, { siren: '12345678', XAPIKEY: 'key' }), [
    'siren: Must be at least 9 characters',
  ]);
  t.same(errorsOf(schemaIds.cfakeyinfoQuery, {}), ['siren: Required', 'XAPIKEY: Required']);
  t.same(errorsOf(schemaIds.cfakeyinfoQuery, { siren: '123456789', XAPIKEY: '' }), ['XAPIKEY: Must not be empty']);
});

t.test('4.5 dossier: exclusive modes', async (t) => {
  const MODES = 'query: use either numeroInterne alone, or numeroExterne with numeroDeca';
  const cases: [Record<string, string>, string[]][] = [
    [{ numeroInterne: 'I1' }, []],
    [{ numeroExterne: 'E1', numeroDeca: 'D1' }, []],
    [{}, [MODES]],
    [{ numeroExterne: 'E1' }, [MODES]],
    [{ numeroDeca: 'D1' }, [MODES]],
    [{ numeroInterne: 'I1', numeroExterne: 'E1' }, [MODES]],
    [{ numeroInterne: 'I1', numeroDeca: 'D1' }, [MODES]],
    [{ numeroInterne: 'I1', numeroExterne: 'E1', numeroDeca: 'D1' }, [MODES]],
    [{ numeroInterne: 'I1', other: 'x' }, ['other: Unrecognized field']],
    [{ numeroInterne: '' }, ['numeroInterne: Must not be empty']],
  ];
  for (const [query, expected] of cases)
    t.same(errorsOf(schemaIds.dossierQuery, query), expected, JSON.stringify(query));
});

t.test('4.6 etats: optional year, date and page, all strings', async (t) => {
  t.same(errorsOf(schemaIds.etatsQuery, {}), []);
  t.same(errorsOf(schemaIds.etatsQuery, { anneeDossier: '2024', dateModification: '2024-01-31', numeroPage: '2' }), []);
  t.same(errorsOf(schemaIds.etatsQuery, { anneeDossier: '24', dateModification: '31/01/2024', numeroPage: 'two' }), [
    'anneeDossier: Expected a year (YYYY)',
    'dateModification: Invalid date',
    'numeroPage: Expected a page number',
  ]);
  t.same(
    errorsOf(schemaIds.etatsQuery, { numeroPage: 2 }),
    ['numeroPage: Expected string'],
    'no coercion: values are the raw strings',
  );
});

t.test('4.7 liste: numerosInternes required, at most 50', async (t) => {
  const numbers = (n: number) => Array.from({ length: n }, (_, i) => `DOS-${i + 1}`).join(',');
  t.same(errorsOf(schemaIds.listeQuery, { numerosInternes: 'DOS-1' }), []);
  t.same(errorsOf(schemaIds.listeQuery, { numerosInternes: numbers(50) }), []);
  t.same(errorsOf(schemaIds.listeQuery, { numerosInternes: numbers(51) }), [
    'numerosInternes: at most 50 internal numbers',
  ]);
  t.same(errorsOf(schemaIds.listeQuery, {}), ['numerosInternes: Required']);
  t.same(errorsOf(schemaIds.listeQuery, { numerosInternes: 'A,,B' }), [
    'numerosInternes: comma-separated internal numbers, none empty',
  ]);
  t.same(errorsOf(schemaIds.listeQuery, { numerosInternes: '' }), [
    'numerosInternes: comma-separated internal numbers, none empty',
  ]);
});

t.test('4.10 factures etats: optional filters', async (t) => {
  const query = {
    anneeFacture: '2024',
    numeroInterneDossier: 'D-1',
    numeroExterneDossier: 'E-1',
    referenceFactureCFA: 'F-1',
    referenceVirement: 'V-1',
    dateModification: '2024-05-01',
    numeroPage: '1',
  };
  t.same(errorsOf(schemaIds.facturesEtatsQuery, query), []);
  t.same(errorsOf(schemaIds.facturesEtatsQuery, { dateModification: '2024-13-01', anneeFacture: 'an' }), [
    'anneeFacture: Expected a year (YYYY)',
    'dateModification: Invalid date',
  ]);
});

t.test('responses: drift is reported with paths, for pipeline step 8 warnings', async (t) => {
  t.same(
    errorsOf(schemaIds.dossier, { status: 'success', cerfa: {}, extra: 1 }),
    [],
    'unknown upstream fields are kept',
  );
  t.same(errorsOf(schemaIds.dossier, { status: 'success' }), ['cerfa: Required']);
  t.same(
    errorsOf(schemaIds.etatsPage, {
      status: 'success',
      EtatDossierResult: [{ numeroInterne: 'I1', etat: 'ENGAGE' }, { etat: 3 }],
    }),
    ['EtatDossierResult.1.numeroInterne: Required', 'EtatDossierResult.1.etat: Expected string'],
  );
  t.same(errorsOf(schemaIds.dossier, null), ['value: Expected object, received null']);
});
