#!/usr/bin/env bash
# Chimera's set-up step for an npm project: copy to .github/chimera/setup.sh in your
# repository and edit. The workflows run it on the base commit, before any patch, with network:
#   bash .github/chimera/setup.sh "$RUNNER_TEMP/chimera-deps"
# It fills ONE folder (DEPS_DIR/node_modules, from package-lock.json of the base commit) that
# the sandbox then shows read-only: node_modules/.bin first on PATH and NODE_PATH pointing at
# it, so `jest`, `vitest` or `node test.js` find the packages. NODE_PATH serves CommonJS
# require(); ES module imports do not read it (bundlers and test runners that resolve through
# NODE_PATH, or a CommonJS test entry, work).
set -euo pipefail
deps="${1:?usage: setup.sh DEPS_DIR}"
mkdir -p "$deps"
cp package.json package-lock.json "$deps/"
npm ci --prefix "$deps" --no-audit --no-fund
