#!/usr/bin/env bash
# Usage: .ci/lerna.sh COMMAND [ARGS...]   (npm run release:version / release:publish call it)
# Runs Lerna, the root devDependency that versions and publishes the packages (docs/releasing.md),
# on the Node 24 that .ci/node.sh installs: Lerna 10 needs Node 22.22 or 24.15+, while the service
# and its tests keep running on Node 20.19+. Node 24 is put first on PATH, so the npm and node
# processes Lerna starts (lifecycle scripts, npm publish) run on it too.
set -euo pipefail
cd "$(dirname "$0")/.."
NODE="$(bash .ci/node.sh 24)"
PATH="$(dirname "$NODE"):$PATH"
export PATH
exec node node_modules/lerna/dist/cli.js "$@"
