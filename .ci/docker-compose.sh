#!/usr/bin/env bash
# Usage: .ci/docker-compose.sh   (prints the path of the binary)
# Builds Docker Compose v2 once from the Go module proxy and caches the binary outside the clone
# ($OPCO_PROXY_CACHE or ~/.cache/opco-proxy). `go install` refuses the module (its go.mod has
# `exclude` directives), so it is built in a writable copy. The version stamped into it is the
# module's, as the project's own Makefile does (`docker compose version` prints it).
set -euo pipefail
VERSION=v2.40.3
CACHE_DIR="${OPCO_PROXY_CACHE:-$HOME/.cache/opco-proxy}"
BIN="$CACHE_DIR/docker-compose-$VERSION"
if [ -x "$BIN" ] && "$BIN" version >/dev/null 2>&1; then echo "$BIN"; exit 0; fi
export PATH="/usr/local/go/bin:$PATH"
mkdir -p "$CACHE_DIR"
go mod download github.com/docker/compose/v2@$VERSION >&2
SRC="$(go env GOMODCACHE)/github.com/docker/compose/v2@$VERSION"
WORK="$(mktemp -d)"
trap 'rm -rf "$WORK"' EXIT
cp -r "$SRC" "$WORK/compose"
chmod -R u+w "$WORK/compose"
# Two build jobs at most, at low priority: the machine is shared.
(cd "$WORK/compose" && CGO_ENABLED=0 GOFLAGS=-buildvcs=false nice -n 10 go build -p 2 -trimpath \
  -ldflags "-s -w -X github.com/docker/compose/v2/internal.Version=$VERSION" -o "$BIN.tmp" ./cmd) >&2
mv "$BIN.tmp" "$BIN"
echo "$BIN"
