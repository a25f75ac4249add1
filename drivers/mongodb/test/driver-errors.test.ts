import t from 'tap';
import { MongoServerError } from 'mongodb';
import { isServerUnavailable } from '../src/driver-errors.js';

/**
 * Answers of a MongoDB server that is there but not serving (shutting down, stepping down, no
 * longer primary) mean the store is unavailable; the answers of a server refusing the command
 * itself do not. FerretDB's own backend failures are played for real in store-backend-down.
 */
const answer = (code: number, errmsg: string, labels: string[] = []) => {
  const error = new MongoServerError({ ok: 0, code, errmsg });
  for (const label of labels) error.addErrorLabel(label);
  return error;
};

t.test('a server that is not serving now', async (t) => {
  for (const [code, name] of [
    [91, 'ShutdownInProgress'],
    [189, 'PrimarySteppedDown'],
    [10107, 'NotWritablePrimary'],
    [11600, 'InterruptedAtShutdown'],
    [11602, 'InterruptedDueToReplStateChange'],
    [13435, 'NotPrimaryNoSecondaryOk'],
    [13436, 'NotPrimaryOrSecondary'],
    [6, 'HostUnreachable'],
    [89, 'NetworkTimeout'],
    [9001, 'SocketException'],
  ] as const) {
    t.ok(isServerUnavailable(answer(code, name)), `${code} ${name}`);
  }
  t.ok(isServerUnavailable(answer(1, 'x', ['ResetPool'])), 'any error the driver labels ResetPool');
});

t.test('FerretDB without its PostgreSQL', async (t) => {
  t.ok(
    isServerUnavailable(
      answer(
        1,
        '[msg_insert.go:168 handler.(*Handler).MsgInsert] failed to connect to `user=postgres database=opco`: server error (FATAL: sorry, too many clients already (SQLSTATE 53300))',
      ),
    ),
    'too many clients',
  );
  t.ok(
    isServerUnavailable(answer(1, 'ERROR: terminating connection due to administrator command (SQLSTATE 57P01)')),
    'the server shutting down',
  );
  t.ok(
    isServerUnavailable(
      answer(
        1,
        '[msg_find.go:344 handler.handleMaxTimeMSError] [query_iterator.go:92 postgresql.(*queryIterator).Next] unexpected EOF',
      ),
    ),
    'a connection lost mid-query',
  );
});

t.test('a command the server refuses is not an outage', async (t) => {
  t.notOk(isServerUnavailable(answer(2, 'BadValue')), 'BadValue');
  t.notOk(isServerUnavailable(answer(11000, 'E11000 duplicate key error')), 'a duplicate key');
  t.notOk(
    isServerUnavailable(answer(1, 'ERROR: duplicate key value violates unique constraint (SQLSTATE 23505)')),
    "FerretDB's unique violation",
  );
  t.notOk(
    isServerUnavailable(answer(1, 'invalid document: unexpected EOF in field')),
    "an EOF that is not at the end of the backend's words",
  );
  t.notOk(isServerUnavailable(new Error('something else')), 'a plain error');
});
