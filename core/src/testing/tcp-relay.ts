/**
 * A TCP relay between a client and a server (a broker, a database), to play network failures in
 * tests: cut() drops every connection at once (a restart, a network cut), refuse() stops
 * listening, so new connections are refused as by a server that is down, until turned off;
 * freeze() keeps connections open but stops forwarding (a server that stops answering);
 * interrupt() cuts one connection in the middle of one command. Shipped in src, like the contract
 * suites, so every package's tests use the same one (`@opco-proxy/core/tcp-relay`).
 */
import { connect, createServer, type Socket } from 'node:net';

export interface Relay {
  /** The target URL, pointed at the relay. */
  url: string;
  /** Connections currently relayed (each counts its two sockets once). */
  readonly connections: number;
  cut(): void;
  refuse(refusing: boolean): void;
  freeze(frozen: boolean): void;
  /**
   * Cuts the connection that next sends a chunk `match` accepts: `request` drops the chunk unsent
   * (the command never ran), `reply` forwards it and drops the server's answer (the command ran,
   * its acknowledgement lost). Resolves once the cut is made; one cut per call.
   */
  interrupt(match: (chunk: Buffer) => boolean, at: 'request' | 'reply'): Promise<void>;
  close(): Promise<void>;
}

interface Interruption {
  match: (chunk: Buffer) => boolean;
  at: 'request' | 'reply';
  done: () => void;
}

export async function startRelay(targetUrl: string, defaultPort: number): Promise<Relay> {
  const target = new URL(targetUrl);
  const pairs = new Set<[Socket, Socket]>();
  let refusing = false;
  let frozen = false;
  let interruption: Interruption | undefined;
  const server = createServer((client) => {
    const upstream = connect(Number(target.port || defaultPort), target.hostname);
    const pair: [Socket, Socket] = [client, upstream];
    pairs.add(pair);
    /** Set when this connection's next answer is to be dropped (interrupt at `reply`). */
    let dropReply: (() => void) | undefined;
    const drop = (done: () => void) => {
      client.destroy();
      upstream.destroy();
      done();
    };
    for (const socket of pair) {
      socket.on('error', () => undefined);
      socket.on('close', () => {
        pairs.delete(pair);
        client.destroy();
        upstream.destroy();
      });
    }
    client.on('data', (chunk: Buffer) => {
      if (frozen) return;
      const cut = interruption?.match(chunk) ? interruption : undefined;
      if (cut) {
        interruption = undefined;
        if (cut.at === 'request') return drop(cut.done);
        dropReply = cut.done;
      }
      upstream.write(chunk);
    });
    upstream.on('data', (chunk) => {
      if (frozen) return;
      if (dropReply) return drop(dropReply);
      client.write(chunk);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  let listening = Promise.resolve();
  const relayed = new URL(target.href);
  relayed.host = `127.0.0.1:${port}`;
  const cut = () => {
    for (const pair of pairs) for (const socket of pair) socket.destroy();
    pairs.clear();
  };
  return {
    url: relayed.href,
    get connections() {
      return pairs.size;
    },
    cut,
    // Not accepting and then dropping: a client that connects and is dropped at once is not what
    // a server that is down does (it refuses the connection), and drivers react differently.
    refuse: (on) => {
      if (on === refusing) return;
      refusing = on;
      listening = listening.then(() =>
        on
          ? new Promise<void>((resolve) => server.close(() => resolve()))
          : new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve)),
      );
    },
    freeze: (on) => {
      frozen = on;
    },
    interrupt: (match, at) =>
      new Promise<void>((done) => {
        interruption = { match, at, done };
      }),
    close: async () => {
      cut();
      await listening;
      if (!refusing) await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
