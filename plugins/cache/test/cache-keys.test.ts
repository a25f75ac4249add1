// The cache's keys: one per opcoId, tenant, route and query (in any order), unchanged in format so
// entries already in a shared Store stay found, and remembered per plugin instance, never per process.
import t from 'tap';
import { sha256Hex, type Opco, type RouteKey } from '@opco-proxy/core';
import { CacheKeys, type KeyedCall } from '../src/cache-keys.js';

const ROUTE: RouteKey = 'GET /dossiers/etats';

type Changes = { opco?: string; tenant?: string; route?: RouteKey };

function call(query: Record<string, string>, changes: Changes = {}): KeyedCall {
  const tenant = { hash: changes.tenant ?? 'tenant-a', apiKey: 'k' };
  return { opco: { id: changes.opco ?? 'up' } as Opco, tenant, route: changes.route ?? ROUTE, query };
}

interface Counted {
  query: Record<string, string>;
  read: () => number;
}

/** A query (frozen unless told) whose values are counted as read: a key made afresh reads them. */
function countedQuery(query: Record<string, string>, frozen = true): Counted {
  let read = 0;
  const proxy = new Proxy(frozen ? Object.freeze({ ...query }) : { ...query }, {
    get(target, name, receiver) {
      read += 1;
      return Reflect.get(target, name, receiver) as unknown;
    },
  });
  return { query: proxy, read: () => read };
}

t.test('the key is the SHA-256 of opcoId, tenant hash, route and the sorted query, as before', async (t) => {
  const keys = new CacheKeys();
  const expected = sha256Hex('["up","tenant-a","GET /dossiers/etats",[["anneeDossier","2022"],["numeroPage","1"]]]');
  t.equal(keys.keyFor(call({ numeroPage: '1', anneeDossier: '2022' })), expected, 'what a Store holds is found again');
  const reordered = new CacheKeys().keyFor(call({ anneeDossier: '2022', numeroPage: '1' }));
  t.equal(reordered, expected, 'the order of the parameters does not matter');
});

t.test('each part of the key makes another key', async (t) => {
  const keys = new CacheKeys();
  const base = keys.keyFor(call({ numeroPage: '1' }));
  const others = {
    opcoId: keys.keyFor(call({ numeroPage: '1' }, { opco: 'other' })),
    tenant: keys.keyFor(call({ numeroPage: '1' }, { tenant: 'tenant-b' })),
    route: keys.keyFor(call({ numeroPage: '1' }, { route: 'GET /dossiers/liste' })),
    value: keys.keyFor(call({ numeroPage: '2' })),
    name: keys.keyFor(call({ numeroDossier: '1' })),
    noQuery: keys.keyFor(call({})),
  };
  for (const [part, key] of Object.entries(others)) t.not(key, base, `another ${part}, another key`);
  t.equal(new Set(Object.values(others)).size, 6, 'and all distinct');
  t.equal(keys.keyFor(call({ numeroPage: '1' })), base, 'the same call, the same key');
  // Values joined by a separator could be confused; the key's JSON keeps them apart.
  t.not(keys.keyFor(call({ a: '1', b: '2' })), keys.keyFor(call({ a: '1","b', b: '2' })));
});

t.test("a frozen query is keyed once per caller, then served from the instance's memory", async (t) => {
  const keys = new CacheKeys();
  const { query, read } = countedQuery({ numeroPage: '1' });
  const first = keys.keyFor(call(query));
  t.equal(read(), 1, 'the first call reads the query');
  t.equal(keys.keyFor(call(query)), first);
  t.equal(keys.keyFor(call(query)), first);
  t.equal(read(), 1, 'later calls on the same query object do not sort or serialise it again');
  t.equal(first, keys.keyFor(call({ numeroPage: '1' })), 'the same key as an unfrozen query with those values');
  const other = keys.keyFor(call(query, { tenant: 'tenant-b' }));
  t.equal(read(), 2, 'another tenant on the same query object is keyed afresh');
  t.not(other, first, 'and gets its own key');
  const unfrozen = countedQuery({ numeroPage: '1' }, false);
  keys.keyFor(call(unfrozen.query));
  keys.keyFor(call(unfrozen.query));
  t.equal(unfrozen.read(), 2, 'a query that may change is read at each call');
});

t.test('two instances share nothing: each makes its own keys', async (t) => {
  const one = new CacheKeys();
  const two = new CacheKeys();
  const { query, read } = countedQuery({ numeroPage: '3' });
  const key = one.keyFor(call(query));
  t.equal(one.remembered, 1);
  t.equal(two.remembered, 0, "what one instance hashed is not in the other's memory");
  t.equal(two.keyFor(call(query)), key, 'the same key');
  t.equal(read(), 2, 'the second instance read the query itself: no memory is shared by the process');
  t.equal(two.remembered, 1);
});

t.test('each memory is bounded at 1,024 and starts again empty past it', async (t) => {
  const keys = new CacheKeys();
  for (let page = 0; page < 1024; page++) keys.keyFor(call({ numeroPage: String(page) }));
  t.equal(keys.remembered, 1024, 'a full memory');
  const late = keys.keyFor(call({ numeroPage: 'late' }));
  t.equal(keys.remembered, 1, 'emptied for the 1,025th text');
  t.equal(late, sha256Hex('["up","tenant-a","GET /dossiers/etats",[["numeroPage","late"]]]'), 'its key still right');

  const { query, read } = countedQuery({ numeroPage: '1' });
  for (let n = 0; n < 1024; n++) keys.keyFor(call(query, { tenant: `tenant-${n}` }));
  keys.keyFor(call(query, { tenant: 'tenant-0' }));
  t.equal(read(), 1024, 'the 1,024 callers of one query are remembered');
  keys.keyFor(call(query, { tenant: 'tenant-1024' }));
  keys.keyFor(call(query, { tenant: 'tenant-0' }));
  t.equal(read(), 1026, "the 1,025th emptied that query's memory: the first caller is keyed afresh");
});
