import t from 'tap';
import { MongoClient, type CommandStartedEvent } from 'mongodb';
import { clientOptions } from '../src/client-options.js';
import { createStore } from '../src/index.js';

/**
 * The replica-set defaults (P18) and the URL's options winning over them: read from the options
 * the driver resolves (no connection), then from the commands the store sends to the server.
 */
const resolved = (url: string) => new MongoClient(url, clientOptions(url)).options;
const bare = 'mongodb://db.example:27017/opco';

t.test('a URL without options gets the replica-set defaults', async (t) => {
  const options = resolved(bare);
  t.equal(options.writeConcern?.w, 'majority', 'writes acknowledged by a majority');
  t.equal(options.retryWrites, true, 'retryable writes');
  t.equal(options.retryReads, true, 'retryable reads');
  t.equal(options.readPreference.mode, 'primary', 'reads from the primary');
  t.equal(options.serverSelectionTimeoutMS, 5000);
  t.equal(options.socketTimeoutMS, 30_000, 'a server that stops answering is given up on');
});

t.test("the URL's options win over the defaults, whatever their case", async (t) => {
  const options = resolved(
    `${bare}?w=1&retrywrites=false&retryReads=false&readPreference=secondaryPreferred&serverSelectionTimeoutMS=900&socketTimeoutMS=0`,
  );
  t.equal(options.writeConcern?.w, 1);
  t.equal(options.retryWrites, false);
  t.equal(options.retryReads, false);
  t.equal(options.readPreference.mode, 'secondaryPreferred');
  t.equal(options.serverSelectionTimeoutMS, 900);
  t.equal(options.socketTimeoutMS, 0);
});

t.test("the URL's other write-concern options join the default w", async (t) => {
  const { writeConcern } = resolved(`${bare}?wtimeoutMS=2500&journal=true`);
  t.equal(writeConcern?.w, 'majority');
  t.equal(writeConcern?.wtimeoutMS, 2500);
  t.equal(writeConcern?.journal, true);
});

const url = process.env.MONGODB_URL;

t.test('the write concern the store sends', { skip: url ? false : 'needs MONGODB_URL' }, async (t) => {
  const collection = `client_options_${process.pid}`;
  t.teardown(async () => {
    const client = await MongoClient.connect(url!);
    await client
      .db()
      .collection(collection)
      .drop()
      .catch(() => undefined);
    await client.close();
  });
  /** The write concern of each write command one store sends for an insert, a findOneAndUpdate and an updateMany. */
  let run = 0;
  const sent = async (storeUrl: string): Promise<Record<string, unknown>> => {
    const commands: CommandStartedEvent[] = [];
    const store = await createStore({ url: storeUrl, onCommand: (event) => commands.push(event) });
    try {
      const docs = store.collection<{ _id: string; n: number }>(collection);
      const _id = `doc-${run++}`;
      await docs.insertOne({ _id, n: 0 });
      await docs.findOneAndUpdate({ _id }, { $inc: { n: 1 } });
      await docs.updateMany({ _id }, { $inc: { n: 1 } });
    } finally {
      await store.close();
    }
    const writes = commands.filter((event) =>
      ['insert', 'findAndModify', 'update', 'delete'].includes(event.commandName),
    );
    return Object.fromEntries(
      writes.map((event) => [event.commandName, (event.command.writeConcern as { w?: unknown } | undefined)?.w]),
    );
  };
  const defaults = await sent(url!);
  t.equal(defaults.insert, 'majority', 'insert with w: majority');
  t.equal(defaults.findAndModify, 'majority', 'findAndModify with w: majority');
  t.equal(defaults.update, 'majority', 'update with w: majority');
  const separator = url!.includes('?') ? '&' : '?';
  const overridden = await sent(`${url!}${separator}w=1`);
  t.same(
    Object.values(overridden),
    Object.values(overridden).map(() => 1),
    'with ?w=1 in the URL, every write with w: 1',
  );
  t.ok(Object.keys(overridden).length >= 3, `writes seen: ${Object.keys(overridden).join(', ')}`);
});
