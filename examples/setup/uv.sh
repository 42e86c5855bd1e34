#!/usr/bin/env bash
# Chimera's set-up step for a uv project: copy to .github/chimera/setup.sh in your repository
# and edit. The workflows run it on the base commit, before any patch, with network:
#   bash .github/chimera/setup.sh "$RUNNER_TEMP/chimera-deps"
# It fills ONE folder (the project's virtual environment, placed outside the checkout) that
# the sandbox then shows read-only, with its bin/ first on PATH.
#
# --no-install-project: the dependencies only, never the project itself (an installed copy
# would shadow the patched files the Spec judges). --locked: exactly uv.lock of the base
# commit; a patch that changes uv.lock or pyproject.toml is held for review anyway.
# Needs uv on the runner (e.g. astral-sh/setup-uv, pinned by SHA, before this step).
set -euo pipefail
deps="${1:?usage: setup.sh DEPS_DIR}"
UV_PROJECT_ENVIRONMENT="$deps" uv sync --locked --no-install-project --all-groups
