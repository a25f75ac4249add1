/**
 * The MongoClient of a store, replaced when it stays unreachable. The driver's server monitor
 * can wedge after a connection is cut under load (a heartbeat that never ends; seen with drivers
 * 6.22 and 7.9 against FerretDB): server selection then fails for ever with the cached error,
 * although the server is back. So every operation reports its outcome here, and once the store
 * has been unreachable for `replaceAfterMs` without a single success, a fresh client takes over
 * (it connects on its first operation) and the old one is closed in the background.
 */
import { MongoClient, type CommandStartedEvent, type Db, type MongoClientOptions } from 'mongodb';
import { DuplicateKeyError, StoreUnavailableError } from '@opco-proxy/core';
import { isDuplicateKey, isServerUnavailable } from './driver-errors.js';

export class ClientHolder {
  private client: MongoClient;
  private database: Db;
  private unavailableSince: number | undefined;
  private closed = false;

  constructor(
    private readonly url: string,
    private readonly options: MongoClientOptions,
    private readonly databaseName: string | undefined,
    private readonly replaceAfterMs: number,
    private readonly onReplace: (cause: string) => void = () => undefined,
    /** Told of every command sent (the driver's command monitoring): how benches and tests count round trips. */
    private readonly onCommand?: (event: CommandStartedEvent) => void,
  ) {
    this.client = this.newClient();
    this.database = this.client.db(databaseName);
  }

  private newClient(): MongoClient {
    if (!this.onCommand) return new MongoClient(this.url, this.options);
    const client = new MongoClient(this.url, { ...this.options, monitorCommands: true });
    client.on('commandStarted', this.onCommand);
    return client;
  }

  async connect(): Promise<void> {
    await this.client.connect();
  }

  db(): Db {
    return this.database;
  }

  /**
   * Runs a driver call, turning a unique-constraint violation into the port's DuplicateKeyError
   * and an unreachable server into StoreUnavailableError (503 UNAVAILABLE for clients), and
   * noting the outcome for the replacement rule.
   */
  async run<R>(call: () => Promise<R>): Promise<R> {
    try {
      const result = await call();
      this.unavailableSince = undefined;
      return result;
    } catch (err) {
      if (isDuplicateKey(err)) {
        this.unavailableSince = undefined;
        throw new DuplicateKeyError((err as Error).message);
      }
      if (isServerUnavailable(err)) {
        this.noteUnavailable((err as Error).message);
        throw new StoreUnavailableError(`MongoDB unavailable: ${(err as Error).message}`, { cause: err });
      }
      throw err;
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    await this.client.close();
  }

  private noteUnavailable(cause: string): void {
    const now = Date.now();
    this.unavailableSince ??= now;
    if (this.closed || now - this.unavailableSince < this.replaceAfterMs) return;
    const old = this.client;
    this.client = this.newClient();
    this.database = this.client.db(this.databaseName);
    this.unavailableSince = now; // the new client gets a whole period of its own
    this.onReplace(cause);
    old.close().catch(() => undefined);
  }
}
