/**
 * What a client would get for each recorded answer, checked as the SPEC describes it: the
 * transformed answer must satisfy the service's response schema for its route in full (the
 * pipeline tolerates drift from a live upstream, D14; a recorded answer has no excuse), its states
 * must be SPEC 3.3 / 3.4 states, and each recorded error must become the error the fixture
 * expects, from the table of SPEC 7, counted as a key refusal exactly when it is one (P13).
 */
import { ERROR_CODES, toErrorBody, type KeyRefusal, type RouteKey, type ServiceError } from '@opco-proxy/core';
import { validate } from '@opco-proxy/schemas';
import type { Finding } from './findings.js';
import { describesKeyRefusal, type Fixture } from './fixtures.js';
import { statelessTest } from './profile-checks.js';
import type { CallOutcome } from './replay.js';
import { answerSchemaOf } from './service-schemas.js';

/** SPEC 3.3 and 3.4. */
export const DOSSIER_STATES = ['TRANSMIS', 'EN_COURS_INSTRUCTION', 'ENGAGE', 'ANNULE', 'REFUSE', 'RUPTURE', 'SOLDE'];
export const FACTURE_STATES = ['TRANSMIS', 'EN_COURS_REGLEMENT', 'REGLE', 'BLOQUE', 'REFUSE', 'ANNULE', 'RELANCE'];
const STATE_FIELDS: Record<string, { states: string[]; section: string }> = {
  etat: { states: DOSSIER_STATES, section: 'SPEC 3.3' },
  etatDossier: { states: DOSSIER_STATES, section: 'SPEC 3.3' },
  etatFacture: { states: FACTURE_STATES, section: 'SPEC 3.4' },
};

export function checkAnswer(route: RouteKey, fixture: Fixture, outcome: CallOutcome): Finding[] {
  const where = fixture.file;
  const after = `after the response transforms of ${route}`;
  if (!outcome.ok) {
    const { code, message } = outcome.error;
    return [
      {
        area: 'answers',
        where,
        message: `the pipeline refused this answer (${code}: ${message}); ${after} it must be an object with the fields the service schema requires`,
      },
    ];
  }
  const findings: Finding[] = [];
  const schema = answerSchemaOf(route);
  if (schema) {
    const result = validate(schema, outcome.body);
    if (!result.valid) {
      for (const error of result.errors) {
        findings.push({
          area: 'answers',
          where,
          message: `${after}, ${error} (service schema ${schema}): add or fix a response transform for that field`,
        });
      }
    }
  } else if (outcome.body === null || typeof outcome.body !== 'object' || Array.isArray(outcome.body)) {
    findings.push({
      area: 'answers',
      where,
      message: `${after} the answer is not an object; a job's result is one (SPEC 2.5)`,
    });
  }
  for (const [path, key, value] of fields(outcome.body)) {
    // The status route reports the upstream's own health words, which are no dossier state.
    const state = route !== 'GET /status' && Object.hasOwn(STATE_FIELDS, key) ? STATE_FIELDS[key] : undefined;
    if (state && typeof value === 'string' && !state.states.includes(value)) {
      findings.push({
        area: 'answers',
        where,
        message: `${after}, ${path} is "${value}", not a state of ${state.section} (${state.states.join(', ')}): map it in the response transforms (mapValues or correctStates)`,
      });
    }
    if (typeof value === 'string' && FRENCH_DATE.test(value)) {
      findings.push({
        area: 'answers',
        where,
        message: `${after}, ${path} is "${value}", a date written DD/MM/YYYY where the service writes YYYY-MM-DD (SPEC 2): add dateFormat(['${path.replace(/\.\d+(?=\.|$)/g, '.*')}']) to the response transforms`,
      });
    }
  }
  return findings;
}

const FRENCH_DATE = /^\d{2}\/\d{2}\/\d{4}$/;

/** Every property at any depth: its dotted path, its name and its value. */
function fields(value: unknown, path = ''): Array<[string, string, unknown]> {
  if (Array.isArray(value)) return value.flatMap((item, index) => fields(item, join(path, String(index))));
  if (value === null || typeof value !== 'object') return [];
  return Object.entries(value).flatMap(([key, item]) => [
    [join(path, key), key, item] as [string, string, unknown],
    ...fields(item, join(path, key)),
  ]);
}

const join = (path: string, key: string) => (path === '' ? key : `${path}.${key}`);

/** The table of SPEC 7 and D5, as the service's client sees it. */
function tableProblem(error: ServiceError): string | undefined {
  const known = ERROR_CODES[error.code];
  if (!known) return `code ${error.code} is not in the error table of SPEC 7`;
  if (error.code === 'UPSTREAM_ERROR') {
    if (error.status < 400 || error.status > 599)
      return `UPSTREAM_ERROR with status ${error.status}, where SPEC 7 says the upstream's own error status`;
  } else if (error.status !== known.status) {
    return `${error.code} with status ${error.status}, where SPEC 7 says ${known.status}`;
  }
  const body = validate('error-body', toErrorBody(error));
  return body.valid ? undefined : `an error body unlike SPEC 7: ${body.errors.join('; ')}`;
}

export function checkError(route: RouteKey, fixture: Fixture, outcome: CallOutcome): Finding[] {
  const where = fixture.file;
  const expected = fixture.expect!;
  if (outcome.ok) {
    return [
      {
        area: 'errors',
        where,
        message: `the upstream's ${fixture.status} became a successful answer; the fixture expects ${expected.status} ${expected.code}`,
      },
    ];
  }
  const { error } = outcome;
  const findings: Finding[] = [];
  const problem = tableProblem(error);
  if (problem) findings.push({ area: 'errors', where, message: problem });
  if (error.code !== expected.code || error.status !== expected.status) {
    const hint =
      expected.code === 'UPSTREAM_ERROR' ||
      ['TIMEOUT', 'NETWORK_ERROR', 'UPSTREAM_INVALID_RESPONSE'].includes(expected.code)
        ? "check the fixture's expect"
        : `add an errors rule to the profile, e.g. {status: ${fixture.status}, body: /<words of this answer>/, routes: ['${route}'], code: '${expected.code}'}`;
    findings.push({
      area: 'errors',
      where,
      message: `the upstream's ${fixture.status} becomes ${error.status} ${error.code} ("${error.message}"), the fixture expects ${expected.status} ${expected.code}: ${hint}`,
    });
  }
  return findings;
}

/** At most this much of an answer's text is quoted in a message. */
const QUOTED_CHARS = 160;

/**
 * The fixture is the upstream saying the CFA's key is unknown (fixtures.ts) exactly when the
 * service took it for one: its ServiceError carries `keyRefused`, which holds the key refused at
 * once (P13). Said only once the service answers the expected code (checkError says otherwise).
 */
export function checkKeyRefusal(fixture: Fixture, outcome: CallOutcome, refusal: KeyRefusal | undefined): Finding[] {
  if (fixture.status < 400 || !fixture.expect || outcome.ok || outcome.error.code !== fixture.expect.code) return [];
  const expected = describesKeyRefusal(fixture);
  const recognised = outcome.error.keyRefused === true;
  if (expected === recognised) return [];
  const where = fixture.file;
  const text = fixture.text.length > QUOTED_CHARS ? `${fixture.text.slice(0, QUOTED_CHARS)}...` : fixture.text;
  if (recognised) {
    return [
      {
        area: 'errors',
        where,
        message:
          `keyRefusal ${String(refusal?.body)} takes this ${fixture.status} for an unknown CFA key, where the fixture's expect says keyRefused: false: the service would hold ` +
          `a key the upstream knows refused at once for a request it merely refused (P13); narrow keyRefusal.body to the upstream's words for an unknown key`,
      },
    ];
  }
  const otherwise =
    'or, if this answer refuses one request to a key the upstream knows, say so in the fixture: "expect": {"status": 403, "code": "HTTP_ERROR", "keyRefused": false}';
  const taken = `the service takes this ${fixture.status} (${text}) for a refused request, not for an unknown CFA key`;
  let why: string;
  if (!refusal) {
    why = `the profile declares no keyRefusal: declare one that matches it, e.g. keyRefusal: {status: ${fixture.status}, body: /<words of this answer>/}`;
  } else if (fixture.status !== (refusal.status ?? 403)) {
    why = `keyRefusal.status is ${refusal.status ?? '403 (the default)'}, this answer's ${fixture.status}: fix keyRefusal.status`;
  } else if (!statelessTest(refusal.body, fixture.text)) {
    why = `keyRefusal.body ${String(refusal.body)} does not match its text: fix it to match the upstream's words (case and accents as the upstream writes them)`;
  } else {
    why = `keyRefusal.body ${String(refusal.body)} matches its text, yet the upstream client did not take it: an errors rule matched it first, or the g or y flag (see the profile findings)`;
  }
  return [{ area: 'errors', where, message: `${taken}: ${why}; ${otherwise}` }];
}
