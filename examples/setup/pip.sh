#!/usr/bin/env bash
# Chimera's set-up step for a pip project: copy to .github/chimera/setup.sh in your repository
# and edit. The workflows run it on the base commit, before any patch, with network:
#   bash .github/chimera/setup.sh "$RUNNER_TEMP/chimera-deps"
# It fills ONE folder (a virtual environment) that the sandbox then shows read-only, with its
# bin/ first on PATH: `python` and `pytest` in a Spec command are this environment's.
#
# Install the project's dependencies, never the project itself: an installed copy of the
# project would shadow the patched files the Spec is meant to judge. A src/ layout puts
# `pythonpath = ["src"]` under [tool.pytest.ini_options] (or PYTHONPATH=src in its command).
# Include the test runner (pytest) among what is installed: `python -m pytest` in the sandbox
# is this environment's python. python3 is the runner's; for another version put
# actions/setup-python (pinned by SHA) before the set-up step.
set -euo pipefail
deps="${1:?usage: setup.sh DEPS_DIR}"
python3 -m venv "$deps"
pip=("$deps/bin/python" -m pip install --disable-pip-version-check -q)

# requirements files, if any (edit the list)
for file in requirements.txt requirements-dev.txt; do
  if [ -f "$file" ]; then "${pip[@]}" -r "$file"; fi
done

# pyproject.toml: [project] dependencies plus the "dev" extra or dependency group, if any
if [ -f pyproject.toml ]; then
  "$deps/bin/python" - >"$deps/chimera-requirements.txt" <<'PY'
import tomllib
with open("pyproject.toml", "rb") as handle:
    data = tomllib.load(handle)
project = data.get("project", {})
wanted = list(project.get("dependencies", []))
wanted += project.get("optional-dependencies", {}).get("dev", [])
wanted += [d for d in data.get("dependency-groups", {}).get("dev", []) if isinstance(d, str)]
print("\n".join(wanted))
PY
  if [ -s "$deps/chimera-requirements.txt" ]; then
    "${pip[@]}" -r "$deps/chimera-requirements.txt"
  fi
fi
