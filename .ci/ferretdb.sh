#!/usr/bin/env bash
# Builds FerretDB v1.24.2 once and caches the binary outside the clone.
# A plain `go install` panics at start: build/version/version.txt is missing from the module,
# so the module is copied to a writable dir and the file written before building.
set -euo pipefail
VERSION=v1.24.2
CACHE_DIR="${OPCO_PROXY_CACHE:-$HOME/.cache/opco-proxy}"
BIN="$CACHE_DIR/ferretdb-$VERSION"
if [ -x "$BIN" ]; then echo "$BIN"; exit 0; fi
export PATH="/usr/local/go/bin:$PATH"
mkdir -p "$CACHE_DIR"
go mod download github.com/FerretDB/FerretDB@$VERSION >&2
SRC="$(go env GOMODCACHE)/github.com/!ferret!d!b/!ferret!d!b@$VERSION"
WORK="$(mktemp -d)"
cp -r "$SRC" "$WORK/ferretdb"
chmod -R u+w "$WORK/ferretdb"
echo "$VERSION" > "$WORK/ferretdb/build/version/version.txt"
(cd "$WORK/ferretdb" && CGO_ENABLED=0 go build -trimpath -o "$BIN.tmp" ./cmd/ferretdb) >&2
mv "$BIN.tmp" "$BIN"
rm -rf "$WORK"
echo "$BIN"
