// What each job sends upstream, step by step (SPEC 4.8-4.13, D16): the job type and route of each POST
// operation, the steps planned (a dossier with files is composite), what each step calls, and the result.
// The worker runs exactly these plans, so a wrong plan is a wrong upstream call.
import t from 'tap';
import type { OpenedInputs } from '../src/job-secrets.js';
import {
  JOB_OPERATIONS,
  jobResultJson,
  kindOf,
  kindOfOperation,
  planSteps,
  routesOf,
  stepCall,
} from '../src/job-plan.js';
import type { JobStep } from '../src/job-records.js';

const pdf = (text: string) => [Buffer.from(`%PDF-${text}`)];
const inputs = (files: Record<string, Buffer[]> = {}): OpenedInputs => ({
  apiKey: 'cfa-key-0001',
  body: { cerfa: { numeroExterne: 'EXT-1' } },
  files,
  stored: [],
});
const done = (step: JobStep, answer: unknown): JobStep => ({
  ...step,
  status: 'completed',
  resultJson: JSON.stringify(answer),
});
const pending = (step: number, name: string) => ({ step, name, status: 'pending', attempts: 0 });

t.test('SPEC 4.8-4.12b, 4.13: each asynchronous POST makes its job type and calls its own route', async (t) => {
  t.same(JOB_OPERATIONS.map(kindOfOperation), [
    { type: 'post-dossier', route: 'POST /dossiers' },
    { type: 'post-facture', route: 'POST /factures' },
    { type: 'post-convention', route: 'POST /conventions' },
    { type: 'post-certificat', route: 'POST /certificats' },
    { type: 'post-document', route: 'POST /documents' },
  ]);
  for (const operation of JOB_OPERATIONS) {
    const kind = kindOfOperation(operation);
    t.same(kindOf(kind.type), kind, `${kind.type} maps back to its operation`);
  }
});

t.test('D16: a dossier is one step without files; with files, the dossier then one document per file', async (t) => {
  t.same(planSteps('post-dossier', []), [pending(1, 'dossier')]);
  t.same(
    planSteps('post-dossier', ['cerfa', 'convention']),
    [pending(1, 'dossier'), pending(2, 'document:cerfa'), pending(3, 'document:convention')],
    'files in the order given',
  );
});

t.test('every other job is a single step named after its resource, files or not', async (t) => {
  const names = {
    'post-facture': 'facture',
    'post-convention': 'convention',
    'post-certificat': 'certificat',
    'post-document': 'document',
  };
  for (const [type, name] of Object.entries(names) as Array<[keyof typeof names, string]>) {
    t.same(planSteps(type, []), [pending(1, name)], type);
    t.same(planSteps(type, ['facture', 'document']), [pending(1, name)], `${type} with files`);
  }
});

t.test('SPEC 1.1 step 2: the routes checked at submission are every route the job will call', async (t) => {
  t.same(routesOf('post-dossier', []), ['POST /dossiers']);
  t.same(routesOf('post-dossier', ['cerfa']), ['POST /dossiers', 'POST /documents'], 'a composite one posts documents');
  t.same(routesOf('post-facture', ['facture']), ['POST /factures'], 'a single step carries its files itself');
  t.same(routesOf('post-document', ['convention']), ['POST /documents']);
});

t.test('a single-step job sends the body and all its files to its route', async (t) => {
  const files = { facture: pdf('f'), annexe: pdf('a') };
  const [step] = planSteps('post-facture', Object.keys(files));
  const { body } = inputs();
  t.same(stepCall('post-facture', step, [step], inputs(files)), { route: 'POST /factures', body, files });
  const [dossier] = planSteps('post-dossier', []);
  t.same(stepCall('post-dossier', dossier, [dossier], inputs()), { route: 'POST /dossiers', body, files: {} });
});

t.test('D16: a composite dossier posts the dossier alone, then each file attached to its numeroInterne', async (t) => {
  const files = { cerfa: pdf('cerfa'), convention: pdf('convention') };
  const steps = planSteps('post-dossier', Object.keys(files));
  const first = stepCall('post-dossier', steps[0], steps, inputs(files));
  t.same(first, { route: 'POST /dossiers', body: inputs().body, files: {} }, 'the dossier without the files');
  const answered = [done(steps[0], { status: 'success', numeroInterne: 'D-42' }), ...steps.slice(1)];
  t.same(
    stepCall('post-dossier', answered[2], answered, inputs(files)),
    {
      route: 'POST /documents',
      body: { typeFichier: 'convention', objets: [{ typeObjet: 'dossier', idObjet: 'D-42' }] },
      files: { convention: files.convention },
    },
    'typeFichier is the role; only that file',
  );
  const numbered = [done(steps[0], { numeroInterne: 4242 }), ...steps.slice(1)];
  const attached = stepCall('post-dossier', numbered[1], numbered, inputs(files)).body;
  const asText = { typeFichier: 'cerfa', objets: [{ typeObjet: 'dossier', idObjet: '4242' }] };
  t.strictSame(attached, asText, 'a numeric numeroInterne sent as a string');
});

t.test('a document step whose dossier answer gave no numeroInterne fails as an unusable answer', async (t) => {
  const steps = planSteps('post-dossier', ['cerfa']);
  const files = { cerfa: pdf('cerfa') };
  const error = { code: 'UPSTREAM_INVALID_RESPONSE' };
  t.throws(() => stepCall('post-dossier', steps[1], steps, inputs(files)), error, 'dossier step not answered');
  const answered = [done(steps[0], { status: 'success' }), steps[1]];
  t.throws(() => stepCall('post-dossier', answered[1], answered, inputs(files)), error, 'answer without numeroInterne');
});

t.test("the result: one step's answer as it is; a composite dossier's with each document's answer", async (t) => {
  const [single] = planSteps('post-facture', []);
  const answer = '{"status":"success","numeroInterne":"F-1"}';
  t.equal(jobResultJson([done(single, JSON.parse(answer))]), answer);
  t.equal(jobResultJson([single]), '{}', 'an empty object when the step answered nothing');
  const [dossier, cerfa, convention] = planSteps('post-dossier', ['cerfa', 'convention']);
  const steps = [done(dossier, { status: 'success', numeroInterne: 'D-42' }), done(cerfa, { id: 'DOC-1' }), convention];
  t.same(JSON.parse(jobResultJson(steps)), {
    status: 'success',
    numeroInterne: 'D-42',
    documents: [
      { name: 'document:cerfa', result: { id: 'DOC-1' } },
      { name: 'document:convention', result: {} },
    ],
  });
});
