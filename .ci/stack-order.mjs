#!/usr/bin/env node
/**
 * Usage: node .ci/stack-order.mjs COMPOSE_CONFIG.json INSPECT.json HEALTHY_AT   (.ci/containers.sh)
 *
 * Checks that the compose stack came up in depends_on order: no container started before every
 * container of each service it depends on was healthy (`service_healthy`) or started
 * (`service_started`). COMPOSE_CONFIG.json is `docker compose config --format json`, INSPECT.json
 * `podman inspect` of the stack's containers, HEALTHY_AT lines of "container-id epoch-ms": when
 * .ci/containers.sh's healthcheck runner first saw each one healthy (at the start of that check).
 * Prints each service's start and healthy times from the first start.
 */
import { readFileSync } from 'node:fs';

const [configFile, inspectFile, healthyFile] = process.argv.slice(2);
const config = JSON.parse(readFileSync(configFile, 'utf8'));
const containers = JSON.parse(readFileSync(inspectFile, 'utf8')).map((c) => ({
  id: c.Id,
  name: c.Name.replace(/^\//, ''),
  service: c.Config.Labels['com.docker.compose.service'],
  started: Date.parse(c.State.StartedAt),
}));
const healthyAt = Object.fromEntries(
  readFileSync(healthyFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => line.split(' '))
    .map(([name, ms]) => [name, Number(ms)]),
);
const t0 = Math.min(...containers.map((c) => c.started));
const s = (ms) => (ms === undefined ? '-' : `${((ms - t0) / 1000).toFixed(1)} s`);
const problems = [];
for (const [service, spec] of Object.entries(config.services)) {
  const mine = containers.filter((c) => c.service === service);
  if (mine.length === 0) problems.push(`${service}: no container`);
  for (const c of mine)
    console.log(
      `  ${c.name.padEnd(24)} started ${s(c.started).padStart(7)}   healthy ${s(healthyAt[c.id]).padStart(7)}`,
    );
  for (const [dependency, { condition }] of Object.entries(spec.depends_on ?? {})) {
    for (const d of containers.filter((c) => c.service === dependency)) {
      const ready = condition === 'service_healthy' ? healthyAt[d.id] : d.started;
      for (const c of mine) {
        if (ready === undefined || c.started < ready)
          problems.push(
            `${c.name} started at ${s(c.started)}, before ${d.name} was ${condition === 'service_healthy' ? 'healthy' : 'started'} (${s(ready)})`,
          );
      }
    }
  }
}
if (problems.length > 0) {
  console.error(`not in depends_on order:\n  ${problems.join('\n  ')}`);
  process.exit(1);
}
console.log('every container started after what it depends on was healthy (depends_on order)');
