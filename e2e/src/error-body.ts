/** The SPEC 7 error body, as every error reply of the service must carry it. */
import type { Test } from 'tap';
import type { Reply } from './harness.js';

export function isErrorBody(t: Test, reply: Reply, status: number, code: string): void {
  t.equal(reply.status, status, `HTTP ${status}: ${reply.text}`);
  t.equal(reply.body?.status, 'error');
  t.equal(reply.body?.code, code);
  t.type(reply.body?.description, 'string');
  t.ok(reply.body.description.length > 0, 'readable description');
  t.equal(reply.headers.get('svc-api-version'), '1', 'version header on errors too');
}
