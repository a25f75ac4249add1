#!/usr/bin/env bash
# Usage: .ci/containers.sh [prepare]   (a step of .ci/run, after the build; root)
# Costs, measured on a busy 2-core machine: about 7-8 min warm (the image build 3.5-4 min of it),
# 11 min cold (+4.5 min: the base images built and imported), plus Docker Compose's first
# build (4-5 min of CPU; seconds with Go's build cache warm).
#   prepare: only what is cached between runs (the packages, the base images, Docker Compose);
#   .ci/run does it early at the lowest priority, so that a cold run costs the tests little.
#
# The container image and the compose stack, built and run for real, with Debian's podman and
# runc (no Docker engine here; .ci/podman-env.sh says how podman is set up) and no registry:
#   1. stand-in base images built here and cached (.ci/base-images.sh): node:24-slim for the
#      Dockerfile's FROM, and RabbitMQ, Prometheus, FerretDB+PostgreSQL for mongo:7;
#   2. the image, from ./Dockerfile as it is: `podman build --format docker` (the OCI format drops
#      the HEALTHCHECK); its size and its layers' sizes;
#   3. the image, run: `serve` with a mounted config answers /health, /ready and /doc as uid 1000
#      on a read-only root file system (one volume, /var/lib/opco-proxy, for an embedded store
#      with a path; no tmpfs), its HEALTHCHECK turns healthy, `podman stop` (SIGTERM) ends it
#      with exit 0 within the grace; demo mode answers from the host; without a config it stops
#      with a message;
#   4. the compose stack of docker-compose.yml + .ci/compose.ci.yml, with Docker Compose v2
#      (.ci/docker-compose.sh) on podman's Docker API, brought up as docs/operations.md says
#      (example.env filled in, the hub first, its key, then the rest, `up -d --build`): every
#      service healthy in depends_on order, then .ci/stack-check.mjs (Prometheus targets and
#      rules, a job and its webhook, `docker compose restart worker` under submissions), and
#      `docker compose down` ending every container with exit 0.
# There is no systemd, so nothing runs HEALTHCHECKs on their own: a loop here runs `podman
# healthcheck run` on the stack's containers (every 2 s until healthy, then every 15 s).
# Everything it starts is removed on exit, whatever happens: containers, pods, volumes,
# networks, the built image, the podman API service and its socket. Exit 1 on any failure.
set -euo pipefail
cd "$(dirname "$0")/.."
STEP_START=$SECONDS
PROJECT=opco-ci
say() { echo "-- $* [$((SECONDS - STEP_START)) s]"; }
fail() { echo "containers: $*" >&2; exit 1; }
port_open() { (exec 3<>"/dev/tcp/127.0.0.1/$1") 2>/dev/null; }
free_port() { node -e 'const s=require("net").createServer().listen(0,"127.0.0.1",()=>{console.log(s.address().port);s.close()})'; }
now_ms() { date +%s%3N; }

[ "$(id -u)" -eq 0 ] || fail "needs root (podman runs rootful here)"
missing=()
command -v podman >/dev/null 2>&1 || missing+=(podman)
command -v runc >/dev/null 2>&1 || missing+=(runc)
command -v debootstrap >/dev/null 2>&1 || missing+=(debootstrap)
[ -x /usr/lib/podman/netavark ] || missing+=(netavark)
[ -x /usr/lib/podman/aardvark-dns ] || missing+=(aardvark-dns)
command -v iptables >/dev/null 2>&1 || missing+=(iptables)   # netavark's NAT and port publishing
if [ "${#missing[@]}" -gt 0 ]; then
  say "installing ${missing[*]}"
  apt-get update -qq
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
fi

# shellcheck source=podman-env.sh
source .ci/podman-env.sh
# Without systemd, podman says "unable to get systemd connection" for every healthcheck timer it
# would have made: noise, filtered out.
podman() { command podman "$@" 2> >(grep -v 'systemd connection' >&2); }
# podman under a time limit, same filter: tpodman SECONDS ARGS...
tpodman() { local limit="$1"; shift; timeout "$limit" podman "$@" 2> >(grep -v 'systemd connection' >&2); }
# One run at a time on a machine: the store, the stack's ports and names are shared. A directory
# holding the owner's PID (a lock on an open file would be inherited by podman's processes): one
# whose owner is gone is taken over.
LOCK="$OPCO_CI_PODMAN_RUN/lock"
LOCKED=0
lock_deadline=$((SECONDS + 1800))
until mkdir "$LOCK" 2>/dev/null; do
  holder="$(cat "$LOCK/pid" 2>/dev/null || true)"
  if [ -n "$holder" ] && ! kill -0 "$holder" 2>/dev/null; then rm -rf "$LOCK"; continue; fi
  [ $SECONDS -lt $lock_deadline ] || fail "another run (pid ${holder:-?}) has held $LOCK for 30 min"
  sleep 2
done
echo $$ >"$LOCK/pid"
LOCKED=1

WORK="$(mktemp -d)"
SOCK="$WORK/podman.sock"
SERVICE_PID=""
HEALTH_PID=""
STACK=0

# Everything in CI's own podman store but the base images: this run's, or one killed before.
clear_store() {
  tpodman 180 rm --all --force --time 5 >/dev/null 2>&1 || echo "containers: could not remove every container"
  tpodman 60 pod rm --all --force >/dev/null 2>&1 || true
  tpodman 60 volume rm --all --force >/dev/null 2>&1 || echo "containers: could not remove every volume"
  tpodman 60 network prune --force >/dev/null 2>&1 || echo "containers: could not remove the networks"
  tpodman 120 rmi --force opco-proxy:local >/dev/null 2>&1 || true
  tpodman 120 image prune --force >/dev/null 2>&1 || true
}
stop_service() {
  local pid
  pid="$(cat "$OPCO_CI_PODMAN_RUN/service.pid" 2>/dev/null || true)"
  if [ -n "$pid" ] && tr '\0' ' ' <"/proc/$pid/cmdline" 2>/dev/null | grep -q "^podman system service"; then
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2>/dev/null || true
  fi
  rm -f "$OPCO_CI_PODMAN_RUN/service.pid"
}
cleanup() {
  local status=$?
  set +e
  if [ -n "$HEALTH_PID" ]; then kill "$HEALTH_PID" 2>/dev/null; wait "$HEALTH_PID" 2>/dev/null; fi
  if [ "$STACK" = 1 ]; then
    echo "-- cleaning up: docker compose down"
    [ "$status" -eq 0 ] || { compose ps -a 2>/dev/null; compose logs --no-color --tail 40 2>/dev/null | tail -n 200; }
    timeout 150 "$WORK/compose" down --volumes --timeout 10 >/dev/null 2>&1 || echo "containers: docker compose down failed"
  fi
  clear_store
  stop_service
  rm -f "$SOCK"
  rm -rf "$WORK"
  [ "$LOCKED" = 0 ] || rm -rf "$LOCK"
  if [ "$status" -ne 0 ]; then echo "containers: FAILED after $((SECONDS - STEP_START)) s"; fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# A run killed before its cleanup left its service or containers behind: gone now.
stop_service
clear_store
podman info --format '{{.Host.OCIRuntime.Name}} {{.Store.GraphDriverName}} {{.Version.Version}}' >/dev/null \
  || fail "podman does not work: $(podman info 2>&1 | tail -n 3)"
echo "podman $(podman --version | cut -d' ' -f3), runtime $(podman info --format '{{.Host.OCIRuntime.Name}}'), store $OPCO_CI_PODMAN_DIR/storage"

# --- 1. the base images and the tools ---
say "base images"
timeout 2400 bash .ci/base-images.sh
say "Docker Compose"
COMPOSE_BIN="$(timeout 2400 bash .ci/docker-compose.sh)"
"$COMPOSE_BIN" version
if [ "${1:-}" = prepare ]; then say "prepared"; exit 0; fi

# --- 2. the image ---
say "podman build --format docker -t opco-proxy:local ."
build_start=$SECONDS
# The build's `npm ci` reads this machine's npm cache (which the clone's `npm ci` filled) through
# an overlay: nothing is written back, and what is there is not downloaded again.
tpodman 1500 build --format docker --pull=never --tag opco-proxy:local --file Dockerfile \
  --volume "$(npm config get cache):/root/.npm:O" . >"$WORK/build.log" 2>&1 \
  || { tail -n 60 "$WORK/build.log"; fail "podman build failed (last lines above)"; }
echo "built in $((SECONDS - build_start)) s"
[ "$(podman image inspect --format '{{.Config.Healthcheck.Test}}' opco-proxy:local)" != "[]" ] || fail "the image has no HEALTHCHECK"
echo "image opco-proxy:local: $(podman image inspect --format '{{.Size}}' opco-proxy:local | awk '{printf "%.0f MB", $1/1e6}'), layers:"
podman history --format '{{.Size}}\t{{.CreatedBy}}' opco-proxy:local | awk -F'\t' '$1 !~ /^0 ?B$/ {printf "  %10s  %s\n", $1, substr($2, 1, 100)}'

# --- 3. the image, run ---
MASTER_KEY="$(openssl rand -hex 32)"
ADMIN_KEY="$(openssl rand -hex 24)"
cat >"$WORK/config.json" <<'EOF'
{ "mode": "production", "store": { "type": "embedded", "path": "/var/lib/opco-proxy" }, "queue": { "type": "embedded" }, "opcos": {}, "logLevel": "warn" }
EOF
chmod 644 "$WORK/config.json"
# Waits for GET $1 to answer 200 (curl), $2 seconds at most.
wait_http() {
  local deadline=$((SECONDS + $2))
  until curl -fsS -o /dev/null --max-time 2 "$1" 2>/dev/null; do
    [ $SECONDS -lt $deadline ] || return 1
    sleep 0.5
  done
}
health_status() { podman inspect --format '{{.State.Health.Status}}' "$1" 2>/dev/null; }
stop_and_check() { # podman stop (SIGTERM) within the grace; exit 0
  local name="$1" t0=$SECONDS code
  tpodman 60 stop --time 30 "$name" >/dev/null
  code="$(podman inspect --format '{{.State.ExitCode}}' "$name")"
  [ "$code" = 0 ] || { podman logs --tail 30 "$name"; fail "$name: exit $code after SIGTERM"; }
  [ $((SECONDS - t0)) -lt 30 ] || fail "$name: took $((SECONDS - t0)) s to stop (grace 30 s)"
  echo "$name: SIGTERM, exit 0 after $((SECONDS - t0)) s"
  podman rm "$name" >/dev/null
}

say "serve, --read-only, config mounted"
PORT="$(free_port)"
podman run -d --name opco-ci-serve --read-only --read-only-tmpfs=false \
  -v opco-ci-data:/var/lib/opco-proxy -v "$WORK/config.json:/etc/opco-proxy/config.json:ro" \
  -e OPCO_PROXY_MASTER_KEY="$MASTER_KEY" -e OPCO_PROXY_ADMIN_KEY="$ADMIN_KEY" \
  -p "127.0.0.1:$PORT:8080" opco-proxy:local >/dev/null
wait_http "http://127.0.0.1:$PORT/health" 60 || { podman logs opco-ci-serve; fail "serve: no /health within 60 s"; }
for path in /health /ready /doc; do
  code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 10 "http://127.0.0.1:$PORT$path")"
  [ "$code" = 200 ] || { podman logs opco-ci-serve; fail "serve: GET $path answered $code"; }
done
uid="$(podman exec opco-ci-serve sh -c 'grep ^Uid: /proc/1/status' | awk '{print $2}')"
[ "$uid" = 1000 ] || fail "serve: runs as uid $uid, not 1000 (node)"
# What it wrote: only the store's directory, the one volume.
written="$(podman exec opco-ci-serve sh -c 'ls -A /var/lib/opco-proxy | wc -l')"
[ "$written" -gt 0 ] || fail "serve: the embedded store wrote nothing in /var/lib/opco-proxy"
tpodman 60 healthcheck run opco-ci-serve >/dev/null || fail "serve: HEALTHCHECK failed"
[ "$(health_status opco-ci-serve)" = healthy ] || fail "serve: health $(health_status opco-ci-serve) after a passing HEALTHCHECK"
echo "serve: /health, /ready, /doc 200 on 127.0.0.1:$PORT, uid 1000, read-only root, writes in /var/lib/opco-proxy ($written entries), HEALTHCHECK healthy"
stop_and_check opco-ci-serve

say "demo mode: podman run -p PORT:8080 opco-proxy:local demo"
PORT="$(free_port)"
podman run -d --name opco-ci-demo -p "127.0.0.1:$PORT:8080" opco-proxy:local demo >/dev/null
wait_http "http://127.0.0.1:$PORT/health" 60 || { podman logs opco-ci-demo; fail "demo: no /health within 60 s"; }
code="$(curl -s -o /dev/null -w '%{http_code}' --max-time 20 -H 'X-API-KEY: demo-key-123' "http://127.0.0.1:$PORT/sandbox/dossiers/etats")"
[ "$code" = 200 ] || { podman logs opco-ci-demo; fail "demo: GET /sandbox/dossiers/etats answered $code"; }
echo "demo: /sandbox/dossiers/etats 200 from the host"
stop_and_check opco-ci-demo

say "no config, no command"
set +e
podman run --rm --name opco-ci-noconfig opco-proxy:local >"$WORK/noconfig.log" 2>&1
code=$?
set -e
[ "$code" = 1 ] || { cat "$WORK/noconfig.log"; fail "without a config: exit $code, expected 1"; }
grep -q '/etc/opco-proxy/config.json' "$WORK/noconfig.log" || { cat "$WORK/noconfig.log"; fail "without a config: the message does not name the file"; }
grep -q 'opco-proxy demo' "$WORK/noconfig.log" || { cat "$WORK/noconfig.log"; fail "without a config: the message does not say how to run demo mode"; }
echo "without a config: exit 1: $(head -c 400 "$WORK/noconfig.log")"

# --- 4. the compose stack ---
say "compose stack"
for port in 8090 9090 15672; do
  port_open "$port" && fail "port $port is taken on this host: the stack publishes it"
done
rm -f "$SOCK"
(exec podman system service --time=0 "unix://$SOCK") >"$WORK/podman-service.log" 2>&1 &
SERVICE_PID=$!
echo "$SERVICE_PID" >"$OPCO_CI_PODMAN_RUN/service.pid"
for _ in $(seq 1 100); do curl -fsS --max-time 2 --unix-socket "$SOCK" http://d/_ping >/dev/null 2>&1 && break; sleep 0.2; done
curl -fsS --max-time 2 --unix-socket "$SOCK" http://d/_ping >/dev/null || { cat "$WORK/podman-service.log"; fail "podman system service did not answer on $SOCK"; }

# The operator's .env: deploy/example.env filled in (docs/operations.md), and what the override needs.
set_env() { if grep -q "^$1=" "$WORK/.env"; then sed -i "s|^$1=.*|$1=$2|" "$WORK/.env"; else echo "$1=$2" >>"$WORK/.env"; fi; }
cp deploy/example.env "$WORK/.env"
set_env OPCO_PROXY_MASTER_KEY "$(openssl rand -hex 32)"
set_env OPCO_PROXY_HUB_SECRET "$(openssl rand -hex 32)"
set_env OPCO_PROXY_ADMIN_KEY "$(openssl rand -hex 24)"
HUB_ADMIN_KEY="$(openssl rand -hex 24)"
set_env OPCO_PROXY_HUB_ADMIN_KEY "$HUB_ADMIN_KEY"
set_env MONGO_PASSWORD "$(openssl rand -hex 16)"
set_env RABBITMQ_PASSWORD "$(openssl rand -hex 16)"
set_env OPCO_A_CLIENT_SECRET "$(openssl rand -hex 16)"
SUBNET=11.89.0
set_env OPCO_CI_SUBNET "$SUBNET"
set_env OPCO_CI_SANDBOX_URL "http://$SUBNET.1:$(free_port)"
set_env OPCO_CI_SANDBOX_SECRET "$(openssl rand -hex 16)"
chmod 600 "$WORK/.env"
# Podman has no BuildKit: compose builds through the API's classic /build (podman's buildah).
# $WORK/compose: docker compose on this stack (a script, so that `timeout` and stack-check.mjs run it).
printf '#!/bin/sh\nexec env DOCKER_HOST=unix://%s DOCKER_BUILDKIT=0 COMPOSE_PROGRESS=plain %s --project-name %s --project-directory %s -f docker-compose.yml -f .ci/compose.ci.yml --env-file %s "$@"\n' \
  "$SOCK" "$COMPOSE_BIN" "$PROJECT" "$PWD" "$WORK/.env" >"$WORK/compose"
chmod 755 "$WORK/compose"
compose() { "$WORK/compose" "$@"; }
compose config --quiet || fail "docker compose config refused docker-compose.yml + .ci/compose.ci.yml"

# The healthcheck runner: every 2 s until a container is healthy, then every 15 s (the image's
# interval); when each container first turns healthy is noted (its ID, epoch ms) in
# $WORK/healthy-at (by ID: under podman, the second `up` recreates the containers of the first).
: >"$WORK/healthy-at"
health_loop() {
  declare -A last=()
  while :; do
    for name in $(podman ps --no-trunc --filter "label=com.docker.compose.project=$PROJECT" --format '{{.ID}}' 2>/dev/null); do
      status="$(health_status "$name")" || continue
      [ -n "$status" ] || continue
      if [ "$status" = healthy ] && [ $((SECONDS - ${last[$name]:-0})) -lt 15 ]; then continue; fi
      last[$name]=$SECONDS
      before="$(now_ms)"
      tpodman 30 healthcheck run "$name" >/dev/null 2>&1 || true
      # Not healthy before this check, healthy after it: it turned healthy at $before at the earliest.
      if [ "$status" != healthy ] && [ "$(health_status "$name")" = healthy ] && ! grep -q "^$name " "$WORK/healthy-at"; then echo "$name $before" >>"$WORK/healthy-at"; fi
    done
    sleep 2
  done
}
health_loop &
HEALTH_PID=$!

# Until every container of the stack runs, and is healthy when it has a healthcheck; $1 s at most.
# (Not `up --wait`: podman reports a disabled healthcheck, the workers', as the status "", which
# Compose takes for an error.)
wait_stack() {
  local deadline=$((SECONDS + $1)) waiting ids
  for (( ; ; )); do
    ids="$(podman ps -a -q --filter "label=com.docker.compose.project=$PROJECT")"
    waiting="no container"
    [ -z "$ids" ] || waiting="$(podman inspect --format '{{.Name}} {{.State.Status}} {{.State.Health.Status}}' $ids | while read -r name state health; do
      if [ "$state" != running ] || { [ -n "$health" ] && [ "$health" != healthy ]; }; then echo "$name ($state${health:+, $health})"; fi
    done)"
    [ -n "$waiting" ] || return 0
    [ $SECONDS -lt $deadline ] || { echo "still waiting for: $waiting"; return 1; }
    sleep 1
  done
}

STACK=1
# The build first, on its own (the layers of the podman build above are its cache), so that the
# times of the `up`s below are those of the stack coming up.
say "docker compose build"
timeout 1500 "$WORK/compose" build >"$WORK/compose-build.log" 2>&1 || { tail -n 40 "$WORK/compose-build.log"; fail "docker compose build failed"; }
UP_START_MS="$(now_ms)"
say "docker compose up -d --build hub   (MongoDB, then the hub)"
timeout 900 "$WORK/compose" up -d --build hub || fail "docker compose up hub failed"
wait_stack 300 || fail "MongoDB and the hub did not come up healthy"
hub_ms=$(($(now_ms) - UP_START_MS))
hub_key="$(curl -fsS --max-time 10 -H "Authorization: Bearer $HUB_ADMIN_KEY" -H 'content-type: application/json' \
  -d '{"fleetId": "publisher", "name": "instances"}' http://127.0.0.1:8090/admin/keys | node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>console.log(JSON.parse(s).key))')" \
  || fail "POST /admin/keys on the hub failed"
set_env OPCO_PROXY_HUB_KEY "$hub_key"
say "docker compose up -d --build   (the rest)"
REST_START_MS="$(now_ms)"
timeout 900 "$WORK/compose" up -d --build || fail "docker compose up failed"
wait_stack 300 || fail "the stack did not come up healthy"
UP_END_MS="$(now_ms)"
podman ps --filter "label=com.docker.compose.project=$PROJECT" --format '  {{.Names}}\t{{.Status}}\t{{.Ports}}'
echo "up: mongodb + hub healthy in $((hub_ms / 1000)) s, the rest in $(((UP_END_MS - REST_START_MS) / 1000)) s: $(((UP_END_MS - UP_START_MS) / 1000)) s from the first up to every service healthy (healthchecks every 2 s until healthy)"

# Healthy in depends_on order: no container started before each service it waits for was healthy.
compose config --format json >"$WORK/config.json.compose"
podman inspect $(podman ps -a -q --filter "label=com.docker.compose.project=$PROJECT") >"$WORK/inspect.json"
node .ci/stack-order.mjs "$WORK/config.json.compose" "$WORK/inspect.json" "$WORK/healthy-at" || fail "the stack did not come up in depends_on order"

# The api replicas' host ports (.ci/compose.ci.yml: podman takes no host port range).
api_urls=""
for index in 1 2; do api_urls="$api_urls${api_urls:+,}http://$(compose port --index "$index" api 8080)"; done
echo "api replicas on $api_urls"

say "through the published ports"
OPCO_CI_API_URLS="$api_urls" OPCO_CI_GATEWAY="$SUBNET.1" OPCO_CI_SANDBOX_URL="$(sed -n 's/^OPCO_CI_SANDBOX_URL=//p' "$WORK/.env")" OPCO_CI_RECEIVER_PORT="$(free_port)" \
  OPCO_CI_COMPOSE="$WORK/compose" timeout 600 node .ci/stack-check.mjs || fail "the stack check failed"

say "docker compose down"
names="$(podman ps -a --filter "label=com.docker.compose.project=$PROJECT" --format '{{.Names}}' | sort)"
since="$(date +%s)"
down_start=$SECONDS
kill "$HEALTH_PID" 2>/dev/null; wait "$HEALTH_PID" 2>/dev/null || true
HEALTH_PID=""
timeout 300 "$WORK/compose" down --volumes || fail "docker compose down failed"
STACK=0
echo "down in $((SECONDS - down_start)) s"
podman events --stream=false --since "$since" --filter event=died --format '{{.Name}} {{.ContainerExitCode}}' >"$WORK/died" 2>&1 || { cat "$WORK/died"; fail "podman events failed"; }
bad=0
for name in $names; do
  code="$(awk -v n="$name" '$1 == n {c = $2} END {print c}' "$WORK/died")"
  if [ "$code" != 0 ]; then echo "  $name: exit ${code:-unknown}"; bad=1; fi
done
[ "$bad" = 0 ] || fail "docker compose down: not every container ended with exit 0"
echo "docker compose down: $(echo "$names" | wc -w) containers, every one exit 0"
say "containers: passed"
