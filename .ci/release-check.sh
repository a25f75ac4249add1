#!/usr/bin/env bash
# Usage: .ci/release-check.sh   (CI runs it; `npm run release:check` too)
# What the next release would be, read from the history (docs/releasing.md):
# 1. commitlint on every commit since the last release tag `vX.Y.Z` (commitlint.config.js): a
#    commit that is not a Conventional Commit would be left out of the bump and the changelog.
#    Without the tag in this clone (a clone that did not fetch tags), from the commit
#    .ci/release-base names; without that either (a shallow clone), the last commit alone.
# 2. `lerna version --conventional-commits --no-push --no-git-tag-version --yes` in a throw-away
#    clone of HEAD, printing the version it would set and the head of the changelog it would
#    write; this checkout is left untouched.
# Both run on the Node 24 of .ci/node.sh (commitlint 21 and Lerna 10 need Node 22+).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT="$PWD"
NODE="$(bash .ci/node.sh 24)"
PATH="$(dirname "$NODE"):$PATH"
export PATH

base="$(git describe --tags --abbrev=0 --match 'v[0-9]*' 2>/dev/null || true)"
if [ -z "$base" ]; then
  base="$(tr -d '[:space:]' < .ci/release-base)"
  git cat-file -e "$base^{commit}" 2>/dev/null || base=""
fi
if [ -n "$base" ]; then
  echo "commitlint: $(git rev-list --count "$base..HEAD") commit(s) since $base"
  node node_modules/@commitlint/cli/cli.js --from "$base" --to HEAD
else
  echo "commitlint: no release tag nor base commit in this clone; the last commit alone"
  node node_modules/@commitlint/cli/cli.js --last
fi

scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
git clone --quiet --shared "$ROOT" "$scratch/tree"
cd "$scratch/tree"
git checkout --quiet -B release-check "$(git -C "$ROOT" rev-parse HEAD)"
# Lerna counts from the last `v*` tag: a clone without it gets one at the base commit.
if [ -n "$base" ] && ! git describe --tags --abbrev=0 --match 'v[0-9]*' >/dev/null 2>&1; then
  git tag "v$(node -p "require('./lerna.json').version")" "$base"
fi
ln -s "$ROOT/node_modules" node_modules
git config user.name "release check"
git config user.email "release-check@localhost"
node node_modules/lerna/dist/cli.js version --conventional-commits --no-push --no-git-tag-version --yes --loglevel warn
echo "release check: the next version would be $(node -p "require('./lerna.json').version")"
git diff --stat -- '*package.json' lerna.json | tail -n 1
[ -f CHANGELOG.md ] && { echo "-- CHANGELOG.md (head)"; head -n 30 CHANGELOG.md; }
