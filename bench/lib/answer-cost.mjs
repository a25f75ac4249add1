#!/usr/bin/env node
// CPU per answer of what the pipeline does to an upstream answer once it has its bytes, with the
// service's own built functions, in one process on the service core: decode and JSON.parse, the
// depth bound, the route's response transforms, the drift check, JSON.stringify for the client.
// No proxy that does this to every answer can cost less per request than a bare proxy plus this.
// Stages are cumulative (each runs the ones before it on a freshly parsed answer), so each
// step's cost is a difference of medians. Prints one JSON line: { step: µs, ..., total: µs }.
//   node bench/lib/answer-cost.mjs --answer FILE [--route 'GET /dossiers/etats'] [--calls 5000] [--rounds 5]
import { readFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { applyTransforms, jsonDepth, MAX_ANSWER_DEPTH } from '../../core/dist/src/application.js';
import { checkAnswer } from '../../core/dist/src/pipeline/response-validation.js';
import { profile } from '../../adapters/sandbox/dist/src/profile.js';
import { summary } from './rounds.mjs';

const { values } = parseArgs({
  options: {
    answer: { type: 'string' },
    route: { type: 'string', default: 'GET /dossiers/etats' },
    calls: { type: 'string', default: '5000' },
    rounds: { type: 'string', default: '5' },
  },
});
const bytes = readFileSync(values.answer);
const route = values.route;
const transforms = profile.routes[route]?.response ?? [];
const calls = Number(values.calls);

const stages = {
  parse: () => JSON.parse(bytes.toString('utf8')),
  depth: (v) => {
    jsonDepth(v, MAX_ANSWER_DEPTH);
    return v;
  },
  transforms: (v) => applyTransforms(v, transforms, true),
  check: (v) => {
    checkAnswer(route, v);
    return v;
  },
  stringify: (v) => JSON.stringify(v),
};
const names = Object.keys(stages);

function cost(upTo) {
  const steps = names.slice(0, upTo + 1).map((n) => stages[n]);
  const before = process.cpuUsage();
  for (let i = 0; i < calls; i++) {
    let value;
    for (const step of steps) value = step(value);
  }
  const used = process.cpuUsage(before);
  return (used.user + used.system) / calls;
}

for (let i = 0; i < names.length; i++) cost(i); // warm-up
const perStage = names.map(() => []);
for (let r = 0; r < Number(values.rounds); r++) names.forEach((_, i) => perStage[i].push(cost(i)));
const medians = perStage.map((v) => summary(v).median);
const result = Object.fromEntries(names.map((n, i) => [n, Math.max(0, medians[i] - (medians[i - 1] ?? 0))]));
result.total = medians[medians.length - 1];
console.log(JSON.stringify(result));
