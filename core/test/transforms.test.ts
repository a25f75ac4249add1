import t from 'tap';
import {
  STATE_CORRECTIONS,
  applyTransforms,
  correctStates,
  dateFormat,
  dropNulls,
  mapValues,
  rename,
  toString,
  trim,
  uppercase,
  wrapBareArray,
  renameKeys,
  pageFrom,
  renumber,
  setDefaults,
} from '../src/profile/transforms.js';
import { camelToSnake, fieldRenamer } from '../src/profile/field-case.js';

/** Deep-freezes a value so that any mutation by a transform throws in strict mode. */
function frozen<T>(value: T): T {
  if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) frozen(item);
    Object.freeze(value);
  }
  return value;
}

t.test('paths', async (t) => {
  t.test('a dotted path reaches a nested field', async (t) => {
    const input = frozen({ cerfa: { apprenti: { nom: ' dupont ', prenom: ' jean ' } } });
    t.strictSame(trim(['cerfa.apprenti.nom']).apply(input), {
      cerfa: { apprenti: { nom: 'dupont', prenom: ' jean ' } },
    });
  });

  t.test('* matches every element of an array', async (t) => {
    const input = frozen({ lignes: [{ numeroDossier: ' A1 ' }, { numeroDossier: ' B2' }, { montant: 3 }] });
    t.strictSame(trim(['lignes.*.numeroDossier']).apply(input), {
      lignes: [{ numeroDossier: 'A1' }, { numeroDossier: 'B2' }, { montant: 3 }],
    });
  });

  t.test('* matches every key of an object', async (t) => {
    const input = frozen({ noms: { a: 'x', b: 'y', c: 3 } });
    t.strictSame(uppercase(['noms.*']).apply(input), { noms: { a: 'X', b: 'Y', c: 3 } });
  });

  t.test('wildcards nest and may start a path (root array)', async (t) => {
    const input = frozen([{ apprentis: [{ nom: 'a' }, { nom: 'b' }] }, { apprentis: [{ nom: 'c' }] }]);
    t.strictSame(uppercase(['*.apprentis.*.nom']).apply(input), [
      { apprentis: [{ nom: 'A' }, { nom: 'B' }] },
      { apprentis: [{ nom: 'C' }] },
    ]);
  });

  t.test('a number selects one array element', async (t) => {
    const input = frozen({ lignes: [{ n: 'a' }, { n: 'b' }] });
    t.strictSame(uppercase(['lignes.1.n']).apply(input), { lignes: [{ n: 'a' }, { n: 'B' }] });
    t.strictSame(uppercase(['lignes.7.n']).apply(input), input, 'out of range: unchanged');
  });

  t.test('missing paths and scalars in the way leave the value unchanged', async (t) => {
    const paths = ['a.b.c', 'x.*.y', 'n.deeper', 'arr.key'];
    const input = frozen({ a: { b: null }, x: 'not a container', n: 5, arr: [1, 2] });
    t.strictSame(uppercase(paths).apply(input), input);
    for (const value of [null, undefined, 42, 'text', true, []]) {
      t.strictSame(uppercase(paths).apply(value), value, `top-level ${JSON.stringify(value)}`);
    }
  });

  t.test('a path with an empty segment fails when the profile is defined', async (t) => {
    t.throws(() => trim(['cerfa..nom']), /empty segment/);
    t.throws(() => trim(['']), /empty segment/);
  });

  t.test('keys are looked up as own properties only', async (t) => {
    const input = frozen({ a: {} });
    t.strictSame(uppercase(['a.constructor', 'a.toString']).apply(input), { a: {} });
  });
});

t.test('immutability: every transform returns a copy sharing nothing with its input', async (t) => {
  const makeInput = () => ({
    cerfa: {
      apprenti: { nom: ' dupont ', dateNaissance: '01/02/2005', nomUsage: null },
      contrat: { dureeTravailHebdoHeures: 35, etat: 'RUTPURE' },
    },
    lignes: [{ numDossier: 'x', n: null }, null],
  });
  const transforms = [
    trim(['cerfa.apprenti.nom']),
    uppercase(['cerfa.apprenti.nom']),
    dateFormat(['cerfa.apprenti.dateNaissance']),
    dropNulls(),
    rename({ 'lignes.*.numDossier': 'numeroDossier' }),
    toString(['cerfa.contrat.dureeTravailHebdoHeures']),
    mapValues(['cerfa.contrat.etat'], { RUTPURE: 'RUPTURE' }),
    correctStates(),
    wrapBareArray('items'),
    trim(['does.not.exist']),
    renameKeys('camel'),
    pageFrom({ items: 'lignes', total: 't', page: 'p', base: 0, into: 'x' }),
    renumber(['cerfa.contrat.dureeTravailHebdoHeures'], { from: 1, to: 0 }),
    setDefaults({ 'cerfa.status': 'success' }),
  ];
  for (const transform of transforms) {
    if (transform.name === 'pageFrom') continue; // reshapes a page; its copies are checked in its own test
    const input = frozen(makeInput());
    const output = transform.apply(input) as ReturnType<typeof makeInput>;
    t.strictSame(input, makeInput(), `${transform.name} leaves its input intact`);
    t.not(output, input, `${transform.name} returns a new top-level value`);
    t.not(output.cerfa, input.cerfa, `${transform.name} copies nested objects`);
    t.not(output.cerfa.contrat, input.cerfa.contrat, `${transform.name} copies untouched subtrees too`);
    t.not(output.lignes, input.lignes, `${transform.name} copies arrays`);
  }
});

t.test('trim', async (t) => {
  const input = frozen({ a: '  x y \n', b: 12, c: null, d: ['  z  '] });
  t.strictSame(trim(['a', 'b', 'c', 'd']).apply(input), { a: 'x y', b: 12, c: null, d: ['  z  '] }, 'only strings');
  t.strictSame(trim(['d.*']).apply(input), { ...input, d: ['z'] });
  t.equal(trim(['a']).name, 'trim');
});

t.test('uppercase', async (t) => {
  const input = frozen({ nom: ' Dupont-lefèvre ', prenom: 'élodie', age: 20, tags: { x: false } });
  t.strictSame(
    uppercase(['nom', 'prenom', 'age', 'tags']).apply(input),
    {
      nom: ' DUPONT-LEFÈVRE ',
      prenom: 'ÉLODIE',
      age: 20,
      tags: { x: false },
    },
    'accents kept, no trimming, non-strings untouched',
  );
  t.equal(uppercase(['nom']).name, 'uppercase');
});

t.test('dateFormat', async (t) => {
  const format = (value: unknown, options?: { to?: 'YYYY-MM-DD' | 'DD/MM/YYYY' }) =>
    (dateFormat(['d'], options).apply({ d: value }) as { d: unknown }).d;

  t.test('accepted inputs', async (t) => {
    t.equal(format('2024-09-01'), '2024-09-01', 'YYYY-MM-DD stays');
    t.equal(format('01/09/2024'), '2024-09-01', 'DD/MM/YYYY');
    t.equal(format('29/02/2024'), '2024-02-29', 'leap day');
    t.equal(format('2024-09-01T00:00:00.000Z'), '2024-09-01', 'UTC midnight');
    t.equal(format('2024-09-01T10:30:00Z'), '2024-09-01');
    t.equal(format('2024-09-01T00:00:00+02:00'), '2024-09-01', 'explicit offset');
    t.equal(format('2024-09-01T15:20'), '2024-09-01', 'no seconds, no offset');
    t.equal(format('2024-09-01T23:59:59.999'), '2024-09-01', 'no offset: the stated date, whatever the zone');
  });

  t.test('D31: a timestamp stands for the date written in it, whatever its offset', async (t) => {
    t.equal(format('2025-09-01T12:00:00.000Z'), '2025-09-01');
    t.equal(format('2024-08-31T22:00:00.000Z'), '2024-08-31', 'the written date, not a conversion to another zone');
    t.equal(format('2024-09-01T00:00:00+02:00'), '2024-09-01');
    t.equal(format('2024-12-31T23:00:00.000-05:00'), '2024-12-31');
  });

  t.test('written as DD/MM/YYYY for upstreams that want it', async (t) => {
    t.equal(format('2024-09-01', { to: 'DD/MM/YYYY' }), '01/09/2024');
    t.equal(format('2024-09-01T10:00:00Z', { to: 'DD/MM/YYYY' }), '01/09/2024');
    t.equal(format('01/09/2024', { to: 'DD/MM/YYYY' }), '01/09/2024');
    t.equal(format('2024-02-30', { to: 'DD/MM/YYYY' }), '2024-02-30', 'impossible dates left for validation');
  });

  t.test('unparseable values are left for validation', async (t) => {
    for (const value of [
      '31/02/2024',
      '2024-13-01T00:00:00Z',
      '1/9/2024',
      '2024/09/01',
      'demain',
      '',
      ' 2024-09-01',
      '2024-02-30T10:00:00+01:00',
    ]) {
      t.equal(format(value), value, JSON.stringify(value));
    }
    for (const value of [null, 20240901, true, { y: 2024 }]) {
      t.strictSame(format(value), value, `non-string ${JSON.stringify(value)}`);
    }
  });

  t.test('several paths and wildcards', async (t) => {
    const input = frozen({
      contrat: { dateDebutContrat: '01/09/2024', dateFinContrat: '2026-08-31T00:00:00Z' },
      echeances: [{ dateDebut: '15/10/2024' }],
    });
    t.strictSame(
      dateFormat(['contrat.dateDebutContrat', 'contrat.dateFinContrat', 'echeances.*.dateDebut']).apply(input),
      {
        contrat: { dateDebutContrat: '2024-09-01', dateFinContrat: '2026-08-31' },
        echeances: [{ dateDebut: '2024-10-15' }],
      },
    );
  });
});

t.test('dropNulls', async (t) => {
  const input = frozen({
    a: null,
    b: 0,
    c: '',
    d: false,
    nested: { x: null, y: { z: null, w: 1 } },
    list: [{ k: null, v: 2 }, null, 3, [{ deep: null }]],
    emptied: { only: null },
  });
  t.strictSame(
    dropNulls().apply(input),
    {
      b: 0,
      c: '',
      d: false,
      nested: { y: { w: 1 } },
      list: [{ v: 2 }, null, 3, [{}]],
      emptied: {},
    },
    'null fields removed at any depth; falsy values, null array elements and emptied objects kept',
  );
  t.equal(dropNulls().apply(null), null, 'a null root stays null');
  t.strictSame(dropNulls().apply([null, 1]), [null, 1]);
  t.equal(dropNulls().apply('text'), 'text');
});

t.test('rename', async (t) => {
  const input = frozen({
    numeroDECA: 'D1',
    dossier: { etatDuDossier: 'ENGAGE', other: 1 },
    lignes: [{ numDossier: 'a' }, { montant: 1 }, 'scalar'],
  });
  t.strictSame(
    rename({ numeroDECA: 'numeroDeca', 'dossier.etatDuDossier': 'etat', 'lignes.*.numDossier': 'numeroDossier' }).apply(
      input,
    ),
    {
      numeroDeca: 'D1',
      dossier: { other: 1, etat: 'ENGAGE' },
      lignes: [{ numeroDossier: 'a' }, { montant: 1 }, 'scalar'],
    },
  );
  t.strictSame(rename({ 'a.b': 'c' }).apply(input), input, 'missing path: unchanged');
  t.strictSame(rename({ x: 'y' }).apply(frozen({ x: 1, y: 2 })), { y: 1 }, 'the renamed field overwrites, like mv');
  t.strictSame(rename({ x: 'x' }).apply(frozen({ x: 1 })), { x: 1 }, 'same name: no-op');
  t.strictSame(rename({ '0': 'first' }).apply(frozen(['a'])), ['a'], 'array elements are not renamed');
  t.throws(() => rename({ 'lignes.*': 'x' }), /rename/, 'wildcard as the renamed field');
  t.throws(() => rename({ a: 'b.c' }), /rename/, 'a path as the new name');
  t.throws(() => rename({ a: '' }), /rename/);
});

t.test('toString', async (t) => {
  const input = frozen({ h: 35, m: 0, f: 7.5, s: '35', n: null, nan: Number.NaN, list: [1, 'x'] });
  t.strictSame(toString(['h', 'm', 'f', 's', 'n', 'nan', 'list.*', 'absent']).apply(input), {
    h: '35',
    m: '0',
    f: '7.5',
    s: '35',
    n: null,
    nan: Number.NaN,
    list: ['1', 'x'],
  });
});

t.test('mapValues', async (t) => {
  const map = { O: true, N: false, A: 'alpha' };
  const input = frozen({ a: 'O', b: 'N', c: 'A', d: 'Z', e: 1, f: ['O', 'toString'] });
  t.strictSame(
    mapValues(['a', 'b', 'c', 'd', 'e', 'f.*'], map).apply(input),
    {
      a: true,
      b: false,
      c: 'alpha',
      d: 'Z',
      e: 1,
      f: [true, 'toString'],
    },
    'unknown values and inherited names are not mapped',
  );
  const objectImage = { nested: [1] };
  const out = mapValues(['a'], { O: objectImage }).apply({ a: 'O' }) as { a: unknown };
  t.strictSame(out.a, objectImage);
  t.not(out.a, objectImage, 'an object image is copied, never shared between outputs');
});

t.test('correctStates', async (t) => {
  t.test('the four corrections of SPEC 4.16, at any depth, on the state keys', async (t) => {
    const input = frozen({
      etat: 'RUTPURE',
      dossiers: [{ etat: 'En cours' }, { etat: 'Valide' }, { etat: 'Refuse' }, { etat: 'SOLDE' }],
      facture: { etatFacture: 'Refuse', dossier: { etatDossier: 'Valide' } },
      commentaire: 'Valide',
      statut: 'RUTPURE',
    });
    t.strictSame(
      correctStates().apply(input),
      {
        etat: 'RUPTURE',
        dossiers: [{ etat: 'EN_COURS_INSTRUCTION' }, { etat: 'ENGAGE' }, { etat: 'REFUSE' }, { etat: 'SOLDE' }],
        facture: { etatFacture: 'REFUSE', dossier: { etatDossier: 'ENGAGE' } },
        commentaire: 'Valide',
        statut: 'RUTPURE',
      },
      'only state keys change; correct states stay',
    );
  });

  t.test('default table', async (t) => {
    t.strictSame(STATE_CORRECTIONS, {
      RUTPURE: 'RUPTURE',
      'En cours': 'EN_COURS_INSTRUCTION',
      Valide: 'ENGAGE',
      Refuse: 'REFUSE',
    });
    t.ok(Object.isFrozen(STATE_CORRECTIONS));
  });

  t.test('bare arrays, exact matches, odd values', async (t) => {
    t.strictSame(
      correctStates().apply([{ etat: 'RUTPURE' }, { etat: 'rutpure' }, { etat: 'En cours ' }]),
      [{ etat: 'RUPTURE' }, { etat: 'rutpure' }, { etat: 'En cours ' }],
      'matching is exact',
    );
    t.strictSame(correctStates().apply({ etat: null, etatDossier: 3, etatFacture: { x: 'Valide' } }), {
      etat: null,
      etatDossier: 3,
      etatFacture: { x: 'Valide' },
    });
    t.strictSame(correctStates().apply({ etat: 'constructor' }), { etat: 'constructor' });
    t.equal(correctStates().apply('Valide'), 'Valide', 'a bare string is not a state property');
  });

  t.test('custom table and keys', async (t) => {
    const transform = correctStates({ PAYE: 'REGLE' }, ['statutFacture']);
    t.strictSame(transform.apply({ statutFacture: 'PAYE', etat: 'RUTPURE' }), {
      statutFacture: 'REGLE',
      etat: 'RUTPURE',
    });
  });
});

t.test('wrapBareArray', async (t) => {
  const items = frozen([{ numeroInterne: '1' }, { numeroInterne: '2' }]);
  const wrapped = wrapBareArray('EtatDossierResult').apply(items) as { EtatDossierResult: unknown };
  t.strictSame(wrapped, { status: 'success', total: 2, count: 2, page: 1, EtatDossierResult: items });
  t.not(wrapped.EtatDossierResult, items);
  t.strictSame(wrapBareArray('x').apply([]), { status: 'success', total: 0, count: 0, page: 1, x: [] });
  const page = frozen({ status: 'success', total: 1, count: 1, page: 1, EtatDossierResult: [{}] });
  t.strictSame(wrapBareArray('EtatDossierResult').apply(page), page, 'a page object is left as is');
  for (const value of [null, 'text', 3, { a: [] }]) {
    t.strictSame(wrapBareArray('x').apply(value), value, JSON.stringify(value));
  }
});

t.test('applyTransforms copies the value once at most, and not at all when the caller owns it', async (t) => {
  const list = [rename({ a: 'b' }), setDefaults({ c: 1 }), mapValues(['b'], { x: 'y' }), trim(['b'])];
  const input = { a: 'x', n: { deep: [1] } };
  const shared = applyTransforms(input, list) as Record<string, unknown>;
  t.strictSame(shared, { n: { deep: [1] }, b: 'y', c: 1 });
  t.strictSame(input, { a: 'x', n: { deep: [1] } }, "the caller's value is untouched");
  t.not(shared.n, input.n, 'and shares nothing with the result');
  const owned = { a: 'x', n: { deep: [1] } };
  const rewritten = applyTransforms(owned, list, true) as Record<string, unknown>;
  t.strictSame(rewritten, shared, 'the same result when rewritten in place');
  t.equal(rewritten.n, owned.n, 'an owned value is not copied');
  const reshaped = applyTransforms({ a: 'x' }, [dropNulls(), rename({ a: 'b' })]);
  t.strictSame(reshaped, { b: 'x' }, 'a transform without rewrite, then one with it');
  const states = [{ etat: 'Valide', lignes: [{ etatDossier: 'RUTPURE' }] }];
  const etats = [correctStates(), wrapBareArray('r')];
  const expected = {
    status: 'success',
    total: 1,
    count: 1,
    page: 1,
    r: [{ etat: 'ENGAGE', lignes: [{ etatDossier: 'RUPTURE' }] }],
  };
  t.strictSame(applyTransforms(states, etats), expected);
  t.strictSame(states, [{ etat: 'Valide', lignes: [{ etatDossier: 'RUTPURE' }] }], 'untouched unless owned');
  const ownedStates = [{ etat: 'Valide', lignes: [{ etatDossier: 'RUTPURE' }] }];
  const wrapped = applyTransforms(ownedStates, etats, true) as { r: unknown };
  t.strictSame(wrapped, expected, 'the same in place');
  t.equal(wrapped.r, ownedStates, 'an owned array is wrapped, not copied');
});

t.test('applyTransforms runs a list in order', async (t) => {
  const input = frozen({ nom: '  dupont  ', d: '01/09/2024', n: null });
  t.strictSame(applyTransforms(input, [trim(['nom']), uppercase(['nom']), dateFormat(['d']), dropNulls()]), {
    nom: 'DUPONT',
    d: '2024-09-01',
  });
  const order = applyTransforms([{ etat: 'Valide' }], [correctStates(), wrapBareArray('r')]);
  t.strictSame(order, { status: 'success', total: 1, count: 1, page: 1, r: [{ etat: 'ENGAGE' }] });
  t.equal(applyTransforms(input, []), input, 'no transforms: the value itself');
  t.equal(applyTransforms(input), input, 'an absent list counts as empty');
});

t.test('every transform has its vocabulary name', async (t) => {
  const names = [
    trim(['a']),
    uppercase(['a']),
    dateFormat(['a']),
    dropNulls(),
    rename({ a: 'b' }),
    toString(['a']),
    mapValues(['a'], {}),
    correctStates(),
    wrapBareArray('a'),
    renameKeys('snake'),
    pageFrom({ items: 'i', total: 't', page: 'p', base: 0, into: 'x' }),
    renumber(['a'], { from: 1, to: 0 }),
    setDefaults({ a: 1 }),
  ].map((transform) => transform.name);
  t.strictSame(names, [
    'trim',
    'uppercase',
    'dateFormat',
    'dropNulls',
    'rename',
    'toString',
    'mapValues',
    'correctStates',
    'wrapBareArray',
    'renameKeys',
    'pageFrom',
    'renumber',
    'setDefaults',
  ]);
});

t.test('renameKeys', async (t) => {
  const service = frozen({
    numeroInterne: 'DOS-1',
    referenceFactureCFA: 'F-1',
    organismeFormation: { siret: '1', IBAN: 'FR76', uaiCfa: 'U' },
    montantRQTHAnnee1: 10,
    cerfa: { maitre1: { dateNaissance: '1980-01-01' } },
    lignes: [{ numeroDossier: 'a' }, 'scalar', null],
    _files: { cerfa: 'x' },
  });
  const wire = {
    numero_interne: 'DOS-1',
    reference_facture_cfa: 'F-1',
    organisme_formation: { siret: '1', iban: 'FR76', uai_cfa: 'U' },
    montant_rqth_annee1: 10,
    cerfa: { maitre1: { date_naissance: '1980-01-01' } },
    lignes: [{ numero_dossier: 'a' }, 'scalar', null],
    _files: { cerfa: 'x' },
  };
  t.strictSame(renameKeys('snake').apply(service), wire, 'every name, at any depth, in arrays too; values untouched');
  const irregular = ['IBAN', 'referenceFactureCFA', 'montantRQTHAnnee1'];
  t.strictSame(
    renameKeys('camel', { irregular }).apply(frozen(wire)),
    service,
    'back to the SPEC names with the irregular table',
  );
  t.strictSame(
    renameKeys('camel').apply(frozen({ reference_facture_cfa: 1, iban: 2 })),
    { referenceFactureCfa: 1, iban: 2 },
    'without the table, acronyms come back by the regular rule',
  );
  t.strictSame(
    renameKeys('camel').apply(frozen({ totalElements: 3, page: 0 })),
    { totalElements: 3, page: 0 },
    'camelCase names stay',
  );
  for (const value of [null, 'text', 3, []])
    t.strictSame(renameKeys('snake').apply(value), value, JSON.stringify(value));
  t.equal(renameKeys('snake').reshapes, true);
});

t.test('field-case: every SPEC name comes back through snake and camel', async (t) => {
  const irregular = [
    'IBAN',
    'XAPIKEY',
    'EtatDossierResult',
    'referenceFactureCFA',
    'coutTotalPedagogieCFA',
    'attestationConventionConformeJSON',
    'accompagnementDROM',
    'montantRQTHAnnee4',
  ];
  const toCamel = fieldRenamer('camel', irregular);
  for (const name of [
    ...irregular,
    'numeroInterne',
    'dateNaissance',
    'organismeFormation',
    'uaiCfa',
    'maitre1',
    'dureeTravailHebdoHeures',
    'status',
    'cerfa',
  ]) {
    t.equal(toCamel(camelToSnake(name)), name, name);
  }
  t.equal(camelToSnake('referenceFactureCFA'), 'reference_facture_cfa');
  t.equal(camelToSnake('montantRQTHAnnee1'), 'montant_rqth_annee1');
  t.equal(toCamel('_files'), '_files', 'a leading underscore is kept');
});

t.test('pageFrom', async (t) => {
  const options = { items: 'items', total: 'totalElements', page: 'page', base: 0, into: 'EtatDossierResult' };
  const upstream = frozen({ items: [{ n: 1 }, { n: 2 }], totalElements: 42, page: 0, size: 2 });
  const page = pageFrom(options).apply(upstream) as { EtatDossierResult: unknown[] };
  t.strictSame(
    page,
    { status: 'success', total: 42, count: 2, page: 1, EtatDossierResult: [{ n: 1 }, { n: 2 }] },
    'page 0 upstream is page 1; size dropped',
  );
  t.not(page.EtatDossierResult, upstream.items, 'items copied');
  t.strictSame(pageFrom({ ...options, base: 1, into: 'factures' }).apply({ items: [], totalElements: 0, page: 3 }), {
    status: 'success',
    total: 0,
    count: 0,
    page: 3,
    factures: [],
  });
  t.strictSame(
    pageFrom(options).apply({ items: [{}] }),
    { status: 'success', total: 1, count: 1, page: 1, EtatDossierResult: [{}] },
    'no total: the items counted',
  );
  for (const value of [[{ n: 1 }], { erreur: 'x' }, null, { items: 'not a list' }]) {
    t.strictSame(pageFrom(options).apply(frozen(value)), value, `left as is: ${JSON.stringify(value)}`);
  }
  t.strictSame(
    applyTransforms([{ n: 1 }], [pageFrom(options), wrapBareArray('EtatDossierResult')]),
    { status: 'success', total: 1, count: 1, page: 1, EtatDossierResult: [{ n: 1 }] },
    'composes with wrapBareArray',
  );
  t.strictSame(pageFrom(options).paths, ['items', 'totalElements', 'page']);
});

t.test('renumber', async (t) => {
  const zeroBased = renumber(['numeroPage', 'n'], { from: 1, to: 0 });
  t.strictSame(
    zeroBased.apply(frozen({ numeroPage: '1', n: 3 })),
    { numeroPage: '0', n: 2 },
    'strings stay strings, numbers numbers',
  );
  t.strictSame(zeroBased.apply(frozen({ numeroPage: '12' })), { numeroPage: '11' });
  for (const value of ['0', 'abc', '-1', '1.5', 0, 2.5, null]) {
    t.strictSame(zeroBased.apply({ numeroPage: value }), { numeroPage: value }, `left as is: ${JSON.stringify(value)}`);
  }
  t.strictSame(zeroBased.apply({}), {}, 'absent: nothing added');
  t.strictSame(renumber(['p'], { from: 0, to: 1 }).apply({ p: '0' }), { p: '1' });
});

t.test('setDefaults', async (t) => {
  const defaults = setDefaults({ status: 'success', 'dossiers.*.status': 'success', 'meta.tags': [] });
  t.strictSame(
    defaults.apply(frozen({ dossiers: [{ n: 1 }, { n: 2, status: 'kept' }, 'scalar'] })),
    {
      dossiers: [{ n: 1, status: 'success' }, { n: 2, status: 'kept' }, 'scalar'],
      status: 'success',
    },
    'absent fields set, present ones kept, missing parents not created',
  );
  t.strictSame(
    defaults.apply(frozen({ status: null, meta: {} })),
    { status: 'success', meta: { tags: [] } },
    'null counts as absent',
  );
  const out = defaults.apply({ meta: {} }) as { meta: { tags: unknown[] } };
  out.meta.tags.push(1);
  t.strictSame((defaults.apply({ meta: {} }) as { meta: { tags: unknown[] } }).meta.tags, [], 'defaults are copied');
  t.strictSame(defaults.apply([1]), [1], 'not an object: left as is');
  t.throws(() => setDefaults({ 'a.*': 1 }), /wildcard/);
});

t.test('transforms declare their paths and whether they reshape, for the adapter kit', async (t) => {
  t.strictSame(dateFormat(['a.b', 'c']).paths, ['a.b', 'c']);
  t.strictSame(rename({ x: 'y' }).paths, ['x']);
  t.equal(rename({ x: 'y' }).reshapes, true);
  t.equal(wrapBareArray('x').reshapes, true);
  t.notOk(mapValues(['a'], {}).reshapes);
  t.equal(dropNulls().paths, undefined, 'deep transforms have no paths');
});
