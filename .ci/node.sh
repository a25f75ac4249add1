#!/usr/bin/env bash
# Usage: .ci/node.sh VERSION   (a major such as 24, or an exact version such as 24.21.0)
# Installs the Node.js binary of that version once, from the npm package node-linux-<arch>
# (the official binary, published on the npm registry), into a cache outside the clone
# ($OPCO_PROXY_CACHE or ~/.cache/opco-proxy)/node-<major>, and prints the binary's path.
# The cache keeps one version per major: the first one installed (delete the dir to refresh).
set -euo pipefail
VERSION="${1:?usage: .ci/node.sh VERSION (e.g. 24)}"
MAJOR="${VERSION%%.*}"
case "$(uname -m)" in
  x86_64) ARCH=x64 ;;
  aarch64) ARCH=arm64 ;;
  *) echo "node.sh: no node-linux-* package for $(uname -m)" >&2; exit 1 ;;
esac
PACKAGE="node-linux-$ARCH"
CACHE_DIR="${OPCO_PROXY_CACHE:-$HOME/.cache/opco-proxy}"
DIR="$CACHE_DIR/node-$MAJOR"
BIN="$DIR/node_modules/$PACKAGE/bin/node"

matches() { # the cached binary runs and is of the version asked for
  local v
  v="$("$BIN" --version 2>/dev/null)" || return 1
  case "$VERSION" in
    *.*) [ "$v" = "v$VERSION" ] ;;
    *) [ "${v%%.*}" = "v$MAJOR" ] ;;
  esac
}

if [ -x "$BIN" ] && matches; then echo "$BIN"; exit 0; fi

mkdir -p "$CACHE_DIR"
# Install into a temporary sibling and move it into place, so that an interrupted install never
# leaves a half-written cache behind.
WORK="$(mktemp -d "$CACHE_DIR/.node-$MAJOR.XXXXXX")"
trap 'rm -rf "$WORK"' EXIT
npm install --prefix "$WORK" --no-save --no-package-lock --no-audit --no-fund --ignore-scripts \
  --loglevel=error "$PACKAGE@$VERSION" >&2
rm -rf "$DIR"
chmod 755 "$WORK"
mv "$WORK" "$DIR"
trap - EXIT
matches || { echo "node.sh: $BIN is not Node $VERSION: $("$BIN" --version 2>&1)" >&2; exit 1; }
echo "$BIN"
