// Issue 38, point 6: slow clients, against the real service as a process with its default
// `server` settings (docs/operations.md, Slow clients). 200 slowloris sockets (headers a byte a
// second, never finished) and 200 slow bodies (whole headers, then a byte a second) are all
// closed within 15 s, each answered 408, while /health, probed every 100 ms on a new connection
// from another process, answers within 100 ms each time but for one stall of the machine.
// Before: the headers were answered after 89 s and their sockets never closed, the bodies were
// still open at 100 s. Then the per-address
// cap: an address holding 64 connections has its 65th answered 429 at once, while another
// address is served. The sockets come from loopback addresses other than 127.0.0.1 (Linux routes
// 127/8 to loopback), spread so that the cap lets them all in.
import t from 'tap';
import { Agent, request } from 'undici';
import { startClientScene } from '../src/client-scene.js';
import { probeHealthApart, slowBodies, slowHeaders } from '../src/slow-clients.js';

const CFA_KEY = 'slow-clients-cfa-key-01';
const scene = await startClientScene({ acceptedKeys: [CFA_KEY] });
t.teardown(() => scene.close());

/** `count` loopback addresses 127.0.`block`.1, .2... */
const addresses = (block: number, count: number) => Array.from({ length: count }, (_, i) => `127.0.${block}.${i + 1}`);

async function metric(reason: string): Promise<number> {
  const text = await (await fetch(`${scene.url}/metrics`)).text();
  return Number(
    new RegExp(`^opco_proxy_connections_closed_total\\{reason="${reason}"\\} (\\d+)`, 'm').exec(text)?.[1] ?? 0,
  );
}

t.test(
  '200 slowloris sockets and 200 slow bodies are closed within 15 s; /health answers within 100 ms throughout (one stall of the machine aside)',
  async (t) => {
    const probes = probeHealthApart(scene.url);
    await probes.ready;
    // Opened over 2 s (200 a second), as attack tools ramp up; each keeps trickling whatever it is answered.
    const headers = slowHeaders(scene.url, { count: 200, from: addresses(1, 8), rampMs: 2000 });
    const bodies = slowBodies(scene.url, {
      count: 200,
      from: addresses(2, 8),
      rampMs: 2000,
      // A body the service reads: a CFA's webhook, each its own key (no tenant rate involved).
      headers: (i) =>
        `POST /webhooks HTTP/1.1\r\nHost: opco-proxy\r\nX-API-Key: slow-body-key-${String(i).padStart(4, '0')}\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n`,
    });
    t.teardown(() => {
      headers.destroy();
      bodies.destroy();
    });
    await Promise.all([headers.closed(16_000), bodies.closed(16_000)]);
    const health = await probes.stop();

    for (const [name, sockets] of [
      ['slowloris', headers],
      ['slow body', bodies],
    ] as const) {
      const lifetimes = sockets.lifetimes();
      t.equal(
        lifetimes.filter((ms) => ms <= 15_000).length,
        200,
        `${name}: all 200 closed by the service within 15 s (first ${(lifetimes[0] / 1000).toFixed(1)} s, last ${(lifetimes[199] / 1000).toFixed(1)} s)`,
      );
      t.same(sockets.answers(), { 'HTTP/1.1 408 Request Timeout': 200 }, `${name}: each answered 408 first`);
    }
    const times = [...health.times].sort((a, b) => a - b);
    t.same(health.failures, [], '/health never failed');
    t.ok(times.length >= 120, `/health probed throughout: ${times.length} probes`);
    const slow = health.times.flatMap((ms, i) =>
      ms >= 50 ? [`${(health.at[i] / 1000).toFixed(1)} s: ${ms.toFixed(0)} ms`] : [],
    );
    // Probes of 100 ms or more are allowed as one episode (sent within 300 ms of each other), none
    // reaching 500 ms: a two-CPU VM loses its CPUs to its host for a moment now and then (two
    // probes of 139 ms sent 0.1 s apart, once in a CI run; 17-35 ms in every run alone). The attack
    // trickles all along and its 400 sockets close over 2 s: what it held would show again and again.
    const over = health.times.flatMap((ms, i) => (ms >= 100 ? [health.at[i]] : []));
    t.ok(
      times[times.length - 1] < 500 && (over.length === 0 || over[over.length - 1] - over[0] <= 300),
      `/health within 100 ms each time, one stall of the machine aside: median ${times[times.length >> 1].toFixed(1)} ms, slowest ${times[times.length - 1].toFixed(1)} ms${slow.length ? ` (over 50 ms: ${slow.join(', ')})` : ''}`,
    );
    t.equal(await metric('headers-timeout'), 200, 'counted: headers-timeout');
    t.equal(await metric('body-too-slow'), 200, 'counted: body-too-slow');
    // The handler cut short by the watch says what the client got, in the access line and the metrics (it said 400).
    const text = await (await fetch(`${scene.url}/metrics`)).text();
    const answered = (status: string) =>
      [
        ...text.matchAll(
          new RegExp(
            `^opco_proxy_http_requests_total\\{[^}]*route="/webhooks"[^}]*status="${status}"[^}]*\\} (\\d+)`,
            'gm',
          ),
        ),
      ].reduce((sum, m) => sum + Number(m[1]), 0);
    t.equal(answered('408'), 200, 'the slow bodies counted as answered 408');
    t.equal(answered('400'), 0, 'none counted as 400');
  },
);

t.test(
  'an address holding 64 connections has its 65th answered 429 at once; another address is served; freed, it is served again',
  async (t) => {
    const held = slowHeaders(scene.url, { count: 64, from: ['127.0.0.2'] });
    t.teardown(() => held.destroy());
    while (held.sockets.some((socket) => socket.openedAt === undefined))
      await new Promise((resolve) => setTimeout(resolve, 20));

    const crowded = new Agent({ localAddress: '127.0.0.2' });
    t.teardown(() => crowded.close());
    const started = performance.now();
    const refused = await request(`${scene.url}/sandbox/dossiers/etats`, {
      dispatcher: crowded,
      headers: { 'x-api-key': CFA_KEY },
    });
    const body = (await refused.body.json()) as { code: string; description: string };
    t.equal(
      refused.statusCode,
      429,
      `answered at once (${(performance.now() - started).toFixed(0)} ms), not after a timeout`,
    );
    t.equal(body.code, 'RATE_LIMITED');
    t.match(body.description, /too many connections from this address: at most 64/);
    t.equal(refused.headers['retry-after'], '1');
    t.equal(refused.headers.connection, 'close');
    t.equal(held.sockets.filter((socket) => socket.closedAt !== undefined).length, 0, 'the 64 it holds are untouched');

    const elsewhere = await request(`${scene.url}/sandbox/dossiers/etats`, { headers: { 'x-api-key': CFA_KEY } });
    await elsewhere.body.dump();
    t.equal(elsewhere.statusCode, 200, '127.0.0.1 is served meanwhile');

    held.destroy();
    await held.closed(5000);
    let again = 0;
    for (let attempt = 0; attempt < 50 && again !== 200; attempt++) {
      const reply = await request(`${scene.url}/health`, { dispatcher: crowded });
      await reply.body.dump();
      again = reply.statusCode;
      if (again !== 200) await new Promise((resolve) => setTimeout(resolve, 20));
    }
    t.equal(again, 200, 'its connections closed, 127.0.0.2 is served again');
    t.ok((await metric('per-address-cap')) >= 1, 'counted: per-address-cap');
  },
);
